"""A version's stored evidence summary: what the explorer pages read instead of the version's trajectories.

The oracle is the trajectory path (`profile.load_frames` + `profile.competence` / `profile.costs`): the summary must
give the same posteriors, costs and counts, on both engines, for versions stored with one and versions without."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sqlalchemy import delete, func, select, update

from skillorchestra_core.db import session
from skillorchestra_core.db.models import HandbookVersion, VersionSummary
from skillorchestra_core.evidence.reader import empty_outcomes
from skillorchestra_core.graph.service import load_version_data
from skillorchestra_core.handbook.overview import show_record
from skillorchestra_core.handbook.store import load_version
from skillorchestra_core.learning import evidence_summary, profile
from skillorchestra_core.learning.competence import PriorConfig
from skillorchestra_core.learning.content_frames import content_frames
from skillorchestra_core.learning.evidence_summary import (
    EvidenceSummary,
    decode,
    encode,
    stored_summary,
    summarise,
)

PRIORS = [PriorConfig(), PriorConfig("flat"), PriorConfig("hierarchical", 5.0)]


def _by_cell(df: pd.DataFrame) -> pd.DataFrame:
    return df.sort_values(["agent", "mode", "skill"]).reset_index(drop=True)


@pytest.fixture
def count_reads(monkeypatch):
    """Counts the reads of a version's whole evidence made to sum a summary."""
    calls: list[int] = []
    real = evidence_summary.read_outcomes
    monkeypatch.setattr(evidence_summary, "read_outcomes", lambda *a, **k: calls.append(1) or real(*a, **k))
    return calls


@pytest.mark.parametrize("name", ["demo-qa", "demo-agents"])
@pytest.mark.parametrize("prior", PRIORS, ids=lambda p: f"{p.kind}-{p.strength:g}")
def test_the_summary_gives_the_posteriors_and_costs_of_the_trajectories(any_demo_db_url, name, prior):
    with session(any_demo_db_url) as s:
        data = load_version_data(s, name, None, prior, 0.9)
        frames = profile.load_frames(s, load_version(s, name))
        expected = profile.competence(frames, prior=prior, level=0.9)
        expected_costs = profile.costs(frames)
    assert len(data.competence) == len(expected) > 0 and data.competence["n"].sum() > 0
    pd.testing.assert_frame_equal(_by_cell(data.competence), _by_cell(expected), check_exact=False, rtol=1e-12)
    pd.testing.assert_frame_equal(data.costs.sort_values(["agent", "mode"]).reset_index(drop=True),
                                  expected_costs.sort_values(["agent", "mode"]).reset_index(drop=True),
                                  check_dtype=False)
    assert data.summary.trajectories == len(frames.evidence)
    assert data.summary.queries == frames.evidence["query_id"].nunique()
    assert data.learned_from == frames.learned_from


def test_every_committed_version_stores_its_summary_and_the_pages_read_no_trajectory(demo_db_url, count_reads):
    with session(demo_db_url) as s:
        versions = s.execute(select(func.count()).select_from(HandbookVersion)).scalar_one()
        stored = s.execute(select(func.count()).select_from(VersionSummary)).scalar_one()
        assert stored == versions > 0
        record = show_record(s, "demo-qa")
        load_version_data(s, "demo-agents", None)
    assert count_reads == []  # shown from the stored summaries alone
    assert record["counts"]["trajectories"] > 0 and record["learned_from"].startswith("learned from ")


def test_a_version_without_a_summary_gets_one_on_its_first_read(any_demo_db_url, count_reads):
    """A version made before summaries were stored (schema 8) is summed once, then stored for every later read."""
    with session(any_demo_db_url) as s:
        version_id = load_version(s, "demo-qa").version_id
        before = load_version_data(s, "demo-qa", None)
        s.execute(delete(VersionSummary).where(VersionSummary.version_id == version_id))
        s.commit()
    with session(any_demo_db_url) as s:
        first = load_version_data(s, "demo-qa", None)
        assert len(count_reads) == 1 and stored_summary(s.connection(), version_id) is not None
        again = load_version_data(s, "demo-qa", None)
    assert len(count_reads) == 1
    for got in (first, again):
        pd.testing.assert_frame_equal(got.competence, before.competence)
        assert got.summary.learned_from == before.summary.learned_from


def test_a_summary_of_another_format_is_summed_again(demo_db_url, count_reads):
    with session(demo_db_url) as s:
        version_id = load_version(s, "demo-qa").version_id
        s.execute(update(VersionSummary).where(VersionSummary.version_id == version_id).values(format=0))
        s.commit()
        assert stored_summary(s.connection(), version_id) is None
        load_version_data(s, "demo-qa", None)
        assert len(count_reads) == 1 and stored_summary(s.connection(), version_id) is not None


def test_a_read_only_database_shows_a_version_without_a_summary(demo_db_file, tmp_path, monkeypatch):
    """Summed on read and shown; storing it fails quietly on a file this user may not write."""
    import os
    import sqlite3

    from skillorchestra_core.db import dispose_engines

    path = tmp_path / "ro.db"
    src, dst = sqlite3.connect(demo_db_file), sqlite3.connect(path)
    src.backup(dst)
    dst.execute("DELETE FROM version_summary")
    dst.commit()
    src.close()
    dst.close()
    path.chmod(0o444)
    real_access = os.access  # root may write anything: tell the permission check what a user would see
    monkeypatch.setattr(os, "access", lambda p, mode, **kw: (str(p) != str(path) or mode != os.W_OK)
                        and real_access(p, mode, **kw))
    dispose_engines()
    try:
        with session(f"sqlite:///{path}") as s:
            data = load_version_data(s, "demo-qa", None)
            assert data.summary.trajectories > 0 and data.competence["n"].sum() > 0
            assert stored_summary(s.connection(), data.loaded.version_id) is None
    finally:
        dispose_engines()


def _summary() -> EvidenceSummary:
    rng = np.random.default_rng(7)
    names = ["a", "<b>é \"x\"", "日本語", "a.b", ""]
    counts = pd.DataFrame({"agent": rng.choice(names[:3], 12), "mode": rng.choice(names[3:], 12),
                           "skill": [f"s{i}" for i in range(12)], "S": rng.random(12) * 9, "F": rng.random(12)})
    pool = pd.DataFrame({"agent": names[:3], "mode": ["a.b", "", "a.b"], "s_mode": [1.0, 2.0, 0.0],
                         "n_mode": [3.0, 4.0, 0.0], "cost": [0.1, np.nan, 1e-9], "n_cost": [3.0, 0.0, 2.0],
                         "recorded": [1.0, np.nan, 0.5]})
    return EvidenceSummary(counts, pool, 17, 40, 11, ("train", "dev"))


def test_the_stored_form_round_trips_exactly_and_holds_no_pickle():
    summary = _summary()
    blob = encode(summary)
    assert b"pickle" not in blob
    back = decode(blob)
    pd.testing.assert_frame_equal(back.counts, summary.counts)
    pd.testing.assert_frame_equal(back.pool, summary.pool)
    assert (back.queries, back.trajectories, back.learn_queries, back.learn_splits) == (17, 40, 11, ("train", "dev"))


def test_an_empty_version_round_trips():
    empty = summarise(empty_outcomes(),
                      pd.DataFrame(columns=["query_id", "mode", "skill", "weight", "attributed_by"]),
                      pd.DataFrame(columns=["skill", "mode", "parent", "name"]),
                      pd.DataFrame(columns=["agent", "mode", "input_price_per_m", "output_price_per_m"]),
                      ("train",))
    back = decode(encode(empty))
    assert back.counts.empty and back.pool.empty and back.trajectories == 0
    assert back.learned_from == "learned from 0 train queries"


def test_held_out_outcomes_do_not_reach_the_summary(demo_db_url):
    """Flipping every val and test score leaves the summed counts and pools as they were (the counts of queries
    and trajectories cover every split, as the Overview shows them)."""
    with session(demo_db_url) as s:
        loaded = load_version(s, "demo-qa")
        frames = profile.load_frames(s, loaded)
    f = content_frames(loaded.content)
    ev = frames.evidence
    assert set(ev["split"]) - set(loaded.content.learn_splits), "the demo must hold held-out rows"
    flipped = ev.assign(score=np.where(ev["split"].isin(loaded.content.learn_splits), ev["score"], 1 - ev["score"]),
                        cost_usd=np.where(ev["split"].isin(loaded.content.learn_splits), ev["cost_usd"], 99.0))
    a = summarise(ev, f.attributions, f.skills, f.agents, tuple(loaded.content.learn_splits))
    b = summarise(flipped, f.attributions, f.skills, f.agents, tuple(loaded.content.learn_splits))
    pd.testing.assert_frame_equal(a.counts, b.counts)
    pd.testing.assert_frame_equal(a.pool, b.pool)
    assert a.learn_queries < a.queries
