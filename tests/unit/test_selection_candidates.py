"""Candidates on the demo tree: depth maps, pruning, stored as immutable versions with their lineage."""

import pytest
from sqlmodel import select

from skillorchestra_core.db import session
from skillorchestra_core.db.models import AuditLog, HandbookVersion
from skillorchestra_core.handbook.content import validate_content
from skillorchestra_core.handbook.store import load_version
from skillorchestra_core.learning import profile
from skillorchestra_core.selection import tree
from skillorchestra_core.selection.candidates import depth_candidates, depth_maps, source_version
from skillorchestra_core.selection.prune import removable
from skillorchestra_core.selection.publish import publish, published
from skillorchestra_core.selection.service import select as run_select
from skillorchestra_core.selection.sweep import SweepOptions


def test_depth_maps_of_the_demo_trees(demo_db_url):
    with session(demo_db_url) as s:
        qa = load_version(s, "demo-qa").content
        agents = load_version(s, "demo-agents").content
    assert depth_maps(qa) == [{"answer": 0}, {"answer": 1}, {"answer": 2}]
    assert len(depth_maps(agents)) == 27  # three modes, levels 0..2 each
    assert [len(tree.cut(qa, dm).skills) for dm in depth_maps(qa)] == [0, 7, 22]


def test_cutting_keeps_the_parent_posteriors_and_a_sound_content(demo_db_url):
    with session(demo_db_url) as s:
        src = load_version(s, "demo-qa")
    cut = tree.cut(src.content, {"answer": 1})
    assert validate_content(cut) == []
    full = profile.competence(profile.frames_from_content(src.content, _evidence(demo_db_url)))
    coarse = profile.competence(profile.frames_from_content(cut, _evidence(demo_db_url)))
    key = ["agent", "skill"]
    a = full[full["skill"] == "answer.math"].set_index(key)["mean"]
    b = coarse[coarse["skill"] == "answer.math"].set_index(key)["mean"]
    assert len(a) == 6 and (a - b).abs().max() < 1e-12


def _evidence(url):
    with session(url) as s:
        return profile.load_outcomes(s, load_version(s, "demo-qa").version_id)


def test_candidates_are_stored_once_as_versions_with_lineage(demo_db_url):
    with session(demo_db_url) as s:
        src = source_version(s, "demo-qa")
        first = depth_candidates(s, src)
        s.commit()
        again = depth_candidates(s, source_version(s, "demo-qa"))
        s.commit()
        rows = s.exec(select(HandbookVersion).order_by(HandbookVersion.number)
                      .where(HandbookVersion.handbook_id == src.handbook_id)).all()
    assert [c.version for c in first] == [c.version for c in again] == [2, 3, 1]
    assert [c.name for c in first] == ["answer0", "answer1", "answer2"]
    assert len(rows) == 3
    assert rows[1].metadata_["candidate"]["depth_map"] == {"answer": 0}
    assert rows[1].metadata_["candidate"]["source_version"] == 1
    assert source_version(s, "demo-qa").number == 1  # candidates are never a source themselves


def test_removable_skills_change_no_decision():
    import numpy as np

    from skillorchestra_core.routing.model import table_from_arrays

    # s_child and its parent rank agents alike (a > b), s_other reverses them: only s_other matters.
    t = table_from_arrays("answer", ["a", "b"], ["s", "s.child", "t"], [[0.9, 0.8, 0.2], [0.5, 0.4, 0.9]],
                          [1.0, 1.0])
    w = np.array([[0, 1.0, 0], [0, 0, 1.0], [0.5, 0.5, 0]])
    gone = removable(t, w, {"s": None, "s.child": "s", "t": None}, [0.0], "normalised")
    assert "t" not in gone and {"s", "s.child"} & set(gone)


def test_select_then_publish_is_used_by_the_api(demo_db_url):
    from skillorchestra_core.routing.api import HandbookRouter

    with session(demo_db_url) as s:
        sel = run_select(s, "demo-qa", SweepOptions(lambdas=(0.0, 0.2, 0.5)), objective_lambda=0.1)
        s.commit()
        pub = publish(s, "demo-qa", sel.selected.version, sel.selected.lam, actor="alice", run_id=sel.selected.id)
        s.commit()
        audit = s.exec(select(AuditLog).where(AuditLog.action == "routing.publish")).all()
    assert sel.selected is not None and not sel.selected.baseline
    assert {"best-single", "oracle", "cheapest", "random", "reference-rule"} <= {r.router for r in sel.runs}
    assert all(r.id is not None for r in sel.runs)
    assert len(audit) == 1 and audit[0].actor == "alice"
    router = HandbookRouter.from_database("demo-qa", db_url=demo_db_url)
    assert router.model.version == pub.version == sel.selected.version
    assert router.defaults.lam == pytest.approx(sel.selected.lam)
    assert HandbookRouter.from_database("demo-qa", db_url=demo_db_url, lam=0.7).defaults.lam == 0.7
    # without the published configuration: the latest version, which a candidate never is
    assert HandbookRouter.from_database("demo-qa", db_url=demo_db_url, use_published=False).model.version == 1
    assert max(c.version for c in sel.candidates) > 1
    with session(demo_db_url) as s:
        assert published(s, "demo-qa").id == pub.id
    from skillorchestra_core.routing.litellm_integration import HandbookRoutingStrategy

    strategy = HandbookRoutingStrategy.from_database("demo-qa", db_url=demo_db_url)
    assert strategy.handbook.model.version == pub.version and strategy.handbook.published.id == pub.id


def test_a_held_out_split_shows_the_configuration_selected_on_val(demo_db_url):
    import numpy as np

    from skillorchestra_core.selection.candidates import as_candidate
    from skillorchestra_core.selection.sweep import run_sweep
    from skillorchestra_core.selection.view import load_view

    lambdas = (0.0, 0.3, 1.0)
    with session(demo_db_url) as s:
        sel = run_select(s, "demo-qa", SweepOptions(lambdas=lambdas), candidates="none", objective_lambda=0.2)
        run_sweep(s, "demo-qa", [as_candidate(s, "demo-qa", 1)], SweepOptions(split="test", lambdas=lambdas))
        s.commit()
        view = load_view(s, "demo-qa", "test", objective_lambda=0.2, rng=np.random.default_rng(0))
    shown = view.runs[view.selected]
    assert sel.selected.lam == 0.3  # here the objective on test itself would pick lambda 0
    assert shown.split == "test" and (shown.version, shown.lam) == (sel.selected.version, sel.selected.lam)
