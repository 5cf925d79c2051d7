"""Crash safety of a live validation run: `skillorchestra live` against the loopback fake OpenAI server, SIGKILLed
while it plans and while it calls the agents, keeps every answer it committed (each whole, none half written) and
nothing else; `--resume ID` (or the same command, when the kill came before the plan was stored) asks only the
queries without a stored answer and ends with exactly the figures of an uninterrupted run. A run killed after its
plan was stored reads as interrupted at once (its owner's pid is gone). On SQLite and on PostgreSQL (fewer kill
points there)."""

from __future__ import annotations

import re
import time

import numpy as np
from sqlalchemy import create_engine, text
from support.crash import (
    KillPoint,
    Outcome,
    Target,
    Zygote,
    consistency,
    fingerprint,
    leftovers,
    outcome_rows,
    run_child,
    summary,
    timeline,
)
from support.fake_openai import FakeOpenAI

from skillorchestra_core.db import dispose_engines, session
from skillorchestra_core.db.selection_tables import ValidationRun
from skillorchestra_core.evidence.ingest import AgentHint, ingest_outcomes
from skillorchestra_core.selection.runs import run_rows

HANDBOOK = "crash-live"


def _reply(body: dict) -> str:
    """The fake agent: right on two queries in three (the ground truth is q mod 5), wrong on the others."""
    q = int(re.search(r"question (\d+)", body["messages"][-1]["content"]).group(1))
    return f"The answer is {q % 5}." if q % 3 else "I do not know."


def _base(url: str) -> None:
    rows = outcome_rows(150, seed=4)  # 30 val queries
    hints = {a: AgentHint(model=f"openai/{a}", input_price_per_m=0.5 + i, output_price_per_m=1.0 + 2 * i)
             for i, a in enumerate(sorted({r.agent for r in rows}))}
    with session(url) as s:
        ingest_outcomes(s, HANDBOOK, rows, source_label="live base", skills_from_task=True, agent_hints=hints)
        s.commit()
    dispose_engines()


def _argv(url: str) -> list[str]:
    """A stored plan is resumed (`--resume ID`); before the plan was stored, the same command starts over."""
    engine = create_engine(url)
    with engine.connect() as c:
        run_id = c.execute(text("SELECT max(id) FROM validation_run WHERE kind = 'live'")).scalar_one()
    engine.dispose()
    base = ["--db", url, "live", HANDBOOK]
    return base + (["--resume", str(run_id)] if run_id else ["--version", "1", "--lambda", "0", "--concurrency", "2"])


def _listed_status(url: str) -> str:
    """The live run's status as `skillorchestra runs` and the Pareto page list it (a fresh engine: no cache)."""
    from sqlmodel import Session

    engine = create_engine(url)
    try:
        with Session(engine) as s:
            hb = s.get(ValidationRun, 1)
            assert hb is not None
            return run_rows(s, hb.handbook_id, kind="live")[0]["status"]
    finally:
        engine.dispose()


def _answers(fp: dict) -> dict[str, tuple]:
    return {row[0]: row for row in fp["live"]}


def _check_kill(out: Outcome, fp: dict, before: dict, clean: dict) -> None:
    """Nothing but the plan and whole answers, each exactly the clean run's; every committed answer kept."""
    same = {k: v for k, v in fp["counts"].items() if k not in ("validation_run", "live_result")}
    assert same == {k: v for k, v in before["counts"].items() if k in same}, out.point.label
    stored, planned = fp["counts"]["live_result"], fp["counts"]["validation_run"]
    assert planned in (0, 1) and (planned or not stored)
    clean_rows = _answers(clean)
    assert all(clean_rows[q] == row for q, row in _answers(fp).items()), out.point.label
    names = [e for _, e in out.run.events]
    ends, starts = names.count("commit-end"), names.count("commit-start")
    if planned and fp["runs"][0][6] == "running":  # answers are commits 2.. (the plan is the first)
        assert ends - 1 <= stored <= starts - 1, (out.point.label, ends, starts, stored)


def test_a_killed_live_run_keeps_its_answers_and_resumes_without_paying_twice(any_db_url, tmp_path):
    target = Target(any_db_url, tmp_path)
    _base(target.url)
    rng = np.random.default_rng(17)
    log = tmp_path / "events.log"
    with FakeOpenAI(delay_s=0.02, responder=_reply) as server:
        env = {"SKILLORCHESTRA_LLM_BACKEND": "litellm", "SKILLORCHESTRA_LLM_API_BASE": server.base_url,
               "SKILLORCHESTRA_LLM_API_KEY": "sk-first", "SKILLORCHESTRA_LLM_RETRIES": "0"}
        zygote = Zygote(preload="litellm")
        try:
            outcomes, interrupted = _live_campaign(target, zygote, server, env, rng, log)
        finally:
            zygote.close()
            target.cleanup()
    print(summary(f"live ({'SQLite' if any_db_url.startswith('sqlite') else 'PostgreSQL'})", outcomes),
          f"| read as interrupted before the resume: {len(interrupted)}")
    for o in outcomes:
        print(f"  {o.point.label:<22} rc {o.run.returncode:>3} {o.state:<10} {timeline(o.run)[-60:]}")
        assert not o.problems and o.resumed, (o.point.label, o.problems)
    assert all(o.run.killed for o in outcomes if o.point.at)
    assert sum(o.state.startswith("answers:") and o.state != "answers:0" for o in outcomes) >= 2
    assert len(interrupted) >= 2  # killed mid-run, listed as interrupted, then resumed to the clean figures


def _live_campaign(target, zygote, server, env, rng, log) -> tuple[list[Outcome], list[str]]:
    before = fingerprint(target.fresh())
    clean_url = target.fresh()
    clean_run = run_child(_argv(clean_url), log, env=env, zygote=zygote)
    assert clean_run.returncode == 0, clean_run.stderr[-1000:]
    clean = fingerprint(clean_url)
    total = clean["counts"]["live_result"]
    assert total == 30 and len(server.requests) == total and clean["runs"][0][6] == "done"
    window = clean_run.at("exit") - clean_run.at("write")
    sqlite = target.url.startswith("sqlite")
    points = [KillPoint(f"write+{d:.2f}s", delay_s=d, after="write")
              for d in rng.uniform(0.0, window, 3 if sqlite else 1).tolist()]
    forced = (("before-commit", 1), ("after-commit", 1), ("in-commit", 9), ("after-commit", 18))
    points += [KillPoint(f"{at} #{n}", at=at, nth=n) for at, n in (forced if sqlite else (forced[0], *forced[2:]))]
    outcomes, interrupted = [], []
    for i, point in enumerate(points):
        url = target.fresh()
        run = run_child(_argv(url), log, env=env, point=point, zygote=zygote)
        fp = fingerprint(url)
        out = Outcome(point, run, f"answers:{fp['counts']['live_result']}" if fp["counts"]["validation_run"]
                      else "before", consistency(url))
        _check_kill(out, fp, before, clean)
        if fp["counts"]["validation_run"] and fp["runs"][0][6] == "running":
            assert out.run.killed and _listed_status(url) == "interrupted", out.point.label
            interrupted.append(out.point.label)
        outcomes.append(out)
        time.sleep(0.1)  # a call the kill cut off has reached the server by now
        asked, stored = len(server.requests), set(_answers(fp))
        resumed = run_child(_argv(url), log, env={**env, "SKILLORCHESTRA_LLM_API_KEY": f"sk-resume-{i}"},
                            zygote=zygote)
        new = [r for r, k in zip(server.requests[asked:], server.keys[asked:]) if k == f"sk-resume-{i}"]
        texts = {r["messages"][-1]["content"] for r in new}
        repaid = [q for q in stored if f"question {q[1:]} " in " ".join(texts)]
        out.problems += [f"left behind: {p}" for p in leftovers(url)] + consistency(url)
        if resumed.returncode != 0:
            out.problems.append(f"resume failed: {resumed.stderr[-500:]}")
        if len(new) != total - len(stored) or repaid:
            out.problems.append(f"resume asked {len(new)} for {total - len(stored)} missing answers; "
                                f"re-asked {repaid[:5]}")
        out.resumed = not out.problems and fingerprint(url) == clean
    return outcomes, interrupted
