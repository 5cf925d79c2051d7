"""One competence path: a canonical export read back (imported, or routed from the file) gives every agent-skill
cell the source version's posterior and the same routing choices; re-importing a handbook's own export adds nothing."""

from __future__ import annotations

import numpy as np
import pytest
from sqlmodel import select

from skillorchestra_core.db import session
from skillorchestra_core.db.models import Query
from skillorchestra_core.formats.canonical import import_handbook
from skillorchestra_core.formats.export import export_document, write_json
from skillorchestra_core.formats.llmrouter import import_llmrouter
from skillorchestra_core.handbook.store import load_version
from skillorchestra_core.learning import profile
from skillorchestra_core.routing import HandbookRouter
from skillorchestra_core.routing.activation import activate_batch
from skillorchestra_core.routing.batch import batch_choose, pad_activations
from skillorchestra_core.routing.build import routing_model
from skillorchestra_core.routing.snapshot import load_model_file

CELL = ["agent", "mode", "skill"]


def _cells(url, name):
    with session(url) as s:
        comp = profile.competence(profile.load_frames(s, load_version(s, name)))
    return comp.set_index(CELL).sort_index()


def _round_trip(url, name, tmp_path):
    path = tmp_path / f"{name}.json"
    with session(url) as s:
        write_json(export_document(s, name, "skillorchestra")[0], path)
    with session(url) as s:
        import_handbook(s, path, f"{name}-copy")
        s.commit()
    return path


def _assert_same_cells(url, a, b):
    x, y = _cells(url, a), _cells(url, b)
    assert list(x.index) == list(y.index)
    for col in ("mean", "ci_low", "ci_high", "alpha", "beta"):
        np.testing.assert_allclose(x[col].to_numpy(), y[col].to_numpy(), rtol=0, atol=1e-12, err_msg=col)


def _texts(url, name, limit=300):
    with session(url) as s:
        hb = load_version(s, name).handbook_id
        return list(s.exec(select(Query.text).where(Query.handbook_id == hb).order_by(Query.ext_id).limit(limit)))


@pytest.mark.parametrize("name", ["demo-qa", "demo-agents"])
def test_demo_export_import_gives_every_cell_and_choice(demo_db_url, tmp_path, name):
    path = _round_trip(demo_db_url, name, tmp_path)
    _assert_same_cells(demo_db_url, name, f"{name}-copy")
    texts = _texts(demo_db_url, name)
    with session(demo_db_url) as s:
        source, copy = routing_model(s, name), routing_model(s, f"{name}-copy")
    from_file = load_model_file(path)
    for mode in source.modes:
        for m in (copy, from_file):
            np.testing.assert_allclose(m.table(mode).mean, source.table(mode).mean, rtol=0, atol=1e-12)
            np.testing.assert_allclose(m.table(mode).general, source.table(mode).general, rtol=0, atol=1e-12)
            # per-skill costs travel in metadata.studio.skill_costs, so the file prices like the stored version
            np.testing.assert_allclose(m.table(mode).skill_cost, source.table(mode).skill_cost, rtol=1e-12, atol=0)
            assert (source.table(mode).skill_cost_n > 0).any()
    # A handbook file carries no labelled queries, so activation may differ; given the same active skills (and
    # with none active, the no-skill fallback), every decision must be the same.
    mode = source.terminal_mode() if len(source.modes) > 1 else source.mode_names[0]
    batch = activate_batch(source, mode, texts, 3)
    acts = [[(batch.skills[j], float(w[j])) for j in np.flatnonzero(w)] for w in batch.weights] + [[]] * 5
    for lam in (0.0, 0.1, 0.5):
        want = batch_choose(source.table(mode), *pad_activations(source.table(mode), acts), lam)[0]
        for m in (copy, from_file, HandbookRouter.from_export(path).model):
            got = batch_choose(m.table(mode), *pad_activations(m.table(mode), acts), lam)[0]
            assert [m.table(mode).agents[i] for i in got] == [source.table(mode).agents[i] for i in want]


def test_llmrouter_export_import_gives_every_cell(db_url, llmrouter_dir, tmp_path):
    with session(db_url) as s:
        import_llmrouter(s, llmrouter_dir, "llmrouter")
        s.commit()
    _round_trip(db_url, "llmrouter", tmp_path)
    _assert_same_cells(db_url, "llmrouter", "llmrouter-copy")


def test_reimporting_its_own_export_adds_nothing(demo_db_url, tmp_path):
    before = _cells(demo_db_url, "demo-qa")
    path = tmp_path / "own.json"
    with session(demo_db_url) as s:
        write_json(export_document(s, "demo-qa", "skillorchestra")[0], path)
    with session(demo_db_url) as s:
        result = import_handbook(s, path, "demo-qa")
        s.commit()
    assert result.evidence_held and not result.created_version
    assert any("not added again" in line for line in result.lines())
    after = _cells(demo_db_url, "demo-qa")
    np.testing.assert_array_equal(before["alpha"].to_numpy(), after["alpha"].to_numpy())
    assert (after["n_imported"] == 0).all()  # nothing stacked on the same evidence


def test_an_edited_own_export_keeps_counting_evidence_once(demo_db_url, tmp_path):
    path = tmp_path / "edited.json"
    with session(demo_db_url) as s:
        doc = export_document(s, "demo-qa", "skillorchestra")[0]
    doc["skills"]["answer.math"]["description"] = "Arithmetic and word problems (edited)"
    write_json(doc, path)
    with session(demo_db_url) as s:
        result = import_handbook(s, path, "demo-qa")
        s.commit()
    assert result.created_version and result.evidence_held  # the description changed, the counts did not
    v2 = _cells(demo_db_url, "demo-qa")
    with session(demo_db_url) as s:
        v1 = profile.competence(profile.load_frames(s, load_version(s, "demo-qa", 1))).set_index(CELL).sort_index()
        assert load_version(s, "demo-qa").content.skills["answer.math"].description.endswith("(edited)")
    np.testing.assert_array_equal(v1["alpha"].to_numpy(), v2["alpha"].to_numpy())
    np.testing.assert_array_equal(v1["beta"].to_numpy(), v2["beta"].to_numpy())


def test_a_file_from_partly_held_evidence_is_refused(demo_db_url, tmp_path):
    path = tmp_path / "partial.json"
    with session(demo_db_url) as s:
        doc = export_document(s, "demo-qa", "skillorchestra")[0]
    doc["metadata"]["studio"]["evidence"].append("0" * 64)
    write_json(doc, path)
    from skillorchestra_core.errors import StudioError

    with session(demo_db_url) as s, pytest.raises(StudioError, match="only in part"):
        import_handbook(s, path, "demo-qa")
