"""Crash safety of an import: `skillorchestra import outcomes` of a 15,000-row file (6,000 on PostgreSQL), SIGKILLed
at random points of its write transaction and at forced points around its commit, leaves the database consistent
with all or nothing of the import, and re-running the command gives exactly what an uninterrupted import gives (no
duplicate rows or versions)."""

from __future__ import annotations

import numpy as np
from support.crash import FORCED, KillPoint, Target, campaign, random_points, summary, timeline, write_outcomes

from skillorchestra_core.db import dispose_engines, session
from skillorchestra_core.evidence.ingest import OutcomeRow, ingest_outcomes

AGENTS = ("alpha", "beta")

HANDBOOK = "crash-import"


def _base(url: str) -> None:
    """A handbook with an earlier import: the killed import makes its second version."""
    rows = [OutcomeRow(line=i + 2, query_id=f"base{i // 2}", query=f"an earlier question {i // 2}",
                       agent=AGENTS[i % 2], score=float(i % 3 == 0), task="base") for i in range(400)]
    with session(url) as s:
        ingest_outcomes(s, HANDBOOK, rows, source_label="base", skills_from_task=True)
        s.commit()
    dispose_engines()


def _import_campaign(url: str, tmp_path, n_random: int, seed: int, n_queries: int):
    _base(url)
    data = tmp_path / "outcomes.csv"
    write_outcomes(data, n_queries, seed=seed)  # six rows (agents) per query
    target = Target(url, tmp_path)
    rng = np.random.default_rng(seed)

    def points(clean):
        forced = [KillPoint(at, at=at) for at in FORCED]
        return random_points(rng, clean, n_random) + forced

    return campaign(target, lambda u: ["--db", u, "import", "outcomes", str(data), "--handbook", HANDBOOK,
                                       "--skills-from-task"], points, tmp_path / "events.log")


def _check(name, outcomes, clean):
    print(summary(name, outcomes), "| clean run:", timeline(clean))
    for o in outcomes:
        print(f"  {o.point.label:<14} rc {o.run.returncode:>3} {o.state:<7} {timeline(o.run)}")
    for o in outcomes:
        assert not o.problems, (o.point.label, o.problems)
        assert o.state in ("before", "after"), (o.point.label, o.state)
        assert o.resumed, o.point.label
    killed = [o for o in outcomes if o.run.killed]
    assert len(killed) >= len(outcomes) // 2  # a random delay may outlast a run that went faster than the clean one
    assert all(o.run.killed for o in outcomes if o.point.at)
    assert sum(o.run.mid_write for o in outcomes) >= 2, "no kill landed inside the import's transaction"
    assert {o.state for o in outcomes} == {"before", "after"}
    by = {o.point.label: o for o in outcomes}
    assert by["before-commit"].state == "before" and by["after-commit"].state == "after"
    assert clean.at("write") is not None and clean.at("commit-end") > clean.at("write")


def test_a_killed_import_leaves_all_or_nothing_and_resumes(tmp_path):
    outcomes, clean = _import_campaign(f"sqlite:///{tmp_path / 'base.db'}", tmp_path, n_random=5, seed=13,
                                      n_queries=2500)  # 15,000 rows
    _check("import (SQLite)", outcomes, clean)


def test_a_killed_import_on_postgresql(pg_db_url, tmp_path):
    outcomes, clean = _import_campaign(pg_db_url, tmp_path, n_random=3, seed=14, n_queries=1000)
    _check("import (PostgreSQL)", outcomes, clean)
