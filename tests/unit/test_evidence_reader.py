"""The column reader returns exactly what the former joined ORM query returned (the oracle, kept here)."""

import pandas as pd
import pytest
from sqlalchemy import select

from skillorchestra_core.db import session
from skillorchestra_core.db.models import Query, Trajectory, VersionBatch
from skillorchestra_core.evidence.reader import OUTCOME_COLUMNS, read_outcomes
from skillorchestra_core.handbook.store import load_version
from skillorchestra_core.learning import profile


def _joined(s, version_id: int) -> pd.DataFrame:
    """The former reader: one joined row per trajectory, through pandas.read_sql."""
    stmt = (select(Trajectory.id.label("trajectory_id"), Trajectory.query_id, Query.ext_id, Query.split, Query.task,
                   Trajectory.agent, Trajectory.mode, Trajectory.score, Trajectory.prompt_tokens,
                   Trajectory.completion_tokens, Trajectory.cost_usd, Trajectory.latency_s, Trajectory.path,
                   Trajectory.source)
            .join(Query, Query.id == Trajectory.query_id)
            .join(VersionBatch, VersionBatch.batch_id == Trajectory.batch_id)
            .where(VersionBatch.version_id == version_id).order_by(Trajectory.id))
    df = pd.read_sql(stmt, s.connection())
    for col in ("prompt_tokens", "completion_tokens", "cost_usd", "latency_s", "score"):
        df[col] = df[col].astype(float)
    return df


@pytest.mark.parametrize("name", ["demo-qa", "demo-agents"])
def test_the_reader_equals_the_joined_query(any_demo_db_url, name):
    with session(any_demo_db_url) as s:
        version_id = load_version(s, name).version_id
        expected = _joined(s, version_id)
        got = profile.load_outcomes(s, version_id)
    assert len(got) > 0 and list(got.columns) == list(OUTCOME_COLUMNS)
    pd.testing.assert_frame_equal(got, expected)


def test_multi_mode_evidence_keeps_its_agents_modes_and_paths(demo_db_url):
    with session(demo_db_url) as s:
        got = profile.load_outcomes(s, load_version(s, "demo-agents").version_id)
    assert got["mode"].nunique() > 1 and got["agent"].nunique() > 1
    assert got["trajectory_id"].is_monotonic_increasing


def test_no_batches_read_nothing(demo_db_url):
    with session(demo_db_url) as s:
        got = read_outcomes(s.connection(), [])
    assert got.empty and list(got.columns) == list(OUTCOME_COLUMNS)


@pytest.mark.parametrize("change", [
    "UPDATE trajectory SET prompt_tokens = NULL WHERE id % 3 = 0",  # packed counts with NULLs
    "UPDATE trajectory SET completion_tokens = 7.5 WHERE id % 5 = 0",  # a fractional count: read as it is
    "UPDATE trajectory SET prompt_tokens = 1048576 WHERE id % 7 = 0",  # too large to pack
    "UPDATE trajectory SET score = 0.25 WHERE id % 4 = 0",  # a non-binary score: read as it is
    "UPDATE trajectory SET score = ROUND(score), cost_usd = NULL, latency_s = NULL",  # binary scores packed too
    "UPDATE trajectory SET id = id + 4000000000000000",  # ids too large to share a number with the group
])
def test_packed_reads_equal_the_joined_query_whatever_the_values(demo_db_url, change):
    from sqlalchemy import text

    with session(demo_db_url) as s:
        s.execute(text("PRAGMA foreign_keys = OFF"))
        s.execute(text(change))
        s.commit()
        version_id = load_version(s, "demo-agents").version_id
        expected = _joined(s, version_id)
        got = profile.load_outcomes(s, version_id)
    assert len(got) > 0
    pd.testing.assert_frame_equal(got, expected)


def test_the_routing_model_from_the_reader_equals_the_one_from_the_joined_query(demo_db_url):
    import dataclasses

    import numpy as np

    from skillorchestra_core.db.models import Query
    from skillorchestra_core.routing.build import build_routing_model, model_from_frames

    with session(demo_db_url) as s:
        loaded = load_version(s, "demo-agents")
        fast = build_routing_model(s, loaded)
        queries = pd.read_sql(select(Query.id, Query.ext_id, Query.text, Query.split)
                              .where(Query.handbook_id == loaded.handbook_id), s.connection())
        frames = profile.frames_from_content(loaded.content, _joined(s, loaded.version_id))
        oracle = model_from_frames(frames, loaded.content, handbook=loaded.handbook_name, version=loaded.number,
                                   content_hash=loaded.content_hash, queries=queries, handbook_id=loaded.handbook_id,
                                   version_id=loaded.version_id, synthetic=loaded.synthetic)
    assert list(fast.modes) == list(oracle.modes) and len(fast.modes) > 1
    for name, table in fast.modes.items():
        for f in dataclasses.fields(table):
            a, b = getattr(table, f.name), getattr(oracle.modes[name], f.name)
            assert np.array_equal(a, b, equal_nan=True) if isinstance(a, np.ndarray) else a == b, f.name
    for f in ("query_ids", "keys", "score", "cost", "trajectory"):
        assert np.array_equal(getattr(fast.evidence, f), getattr(oracle.evidence, f), equal_nan=True), f
    assert fast.evidence.texts == oracle.evidence.texts and fast.evidence.ext_ids == oracle.evidence.ext_ids
    assert fast.skill_queries == oracle.skill_queries and fast.val_queries == oracle.val_queries
    assert fast.settings == oracle.settings
