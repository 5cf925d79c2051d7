"""Crash safety of a validation sweep: `skillorchestra select` (candidates, replay runs, baselines), SIGKILLed while it
computes and around its commit, leaves the database consistent with none or all of its candidate versions and runs,
and re-running it gives exactly the clean sweep's versions and run figures (identical runs are found, not stored
twice). On SQLite and on PostgreSQL (fewer random kills there)."""

from __future__ import annotations

import numpy as np
from support.crash import FORCED, KillPoint, Target, campaign, outcome_rows, random_points, summary, timeline

from skillorchestra_core.db import dispose_engines, session
from skillorchestra_core.evidence.ingest import ingest_outcomes

HANDBOOK = "crash-select"


def test_a_killed_sweep_stores_all_or_nothing_and_reruns_to_the_same_figures(any_db_url, tmp_path):
    url = any_db_url
    sqlite = url.startswith("sqlite")
    with session(url) as s:
        ingest_outcomes(s, HANDBOOK, outcome_rows(400, seed=2), source_label="select base", skills_from_task=True)
        s.commit()
    dispose_engines()
    rng = np.random.default_rng(8)

    def points(clean):
        # The sweep writes its candidate versions first, then computes the runs in the same transaction.
        return random_points(rng, clean, 5 if sqlite else 3) + [KillPoint(a, at=a) for a in FORCED]

    argv = lambda u: ["--db", u, "select", HANDBOOK, "--lambdas", "0,0.05,0.1,0.2", "--json"]  # noqa: E731
    outcomes, clean = campaign(Target(url, tmp_path), argv, points, tmp_path / "events.log")
    print(summary(f"select ({'SQLite' if sqlite else 'PostgreSQL'})", outcomes), "| clean run:", timeline(clean))
    for o in outcomes:
        print(f"  {o.point.label:<16} rc {o.run.returncode:>3} {o.state:<7} {timeline(o.run)}")
        assert not o.problems and o.state in ("before", "after") and o.resumed, (o.point.label, o.state, o.problems)
    assert sum(o.run.mid_write for o in outcomes) >= 2, "no kill landed inside the sweep's transaction"
    assert any(o.run.mid_write for o in outcomes if not o.point.at), "no random kill landed inside the transaction"
    by = {o.point.label: o for o in outcomes}
    assert by["before-commit"].state == "before" and by["after-commit"].state == "after"
    assert '"frontier"' in clean.stdout and clean.at("commit-start") - clean.at("write") > 0.1
