"""Held-out evaluation on a hand-computed handbook: accuracy, recorded cost and calls per router, replay by query id
when two queries share a text, and the CLI's JSON contract."""

from __future__ import annotations

import dataclasses
import json

import pytest
from typer.testing import CliRunner

from skillorchestra_core.cli import app
from skillorchestra_core.db import session
from skillorchestra_core.evidence.ingest import OutcomeRow, ingest_outcomes
from skillorchestra_core.routing.build import routing_model
from skillorchestra_core.routing.engine import RouteOptions, route
from skillorchestra_core.routing.evaluate import evaluate

HB = "eval-mini"
SAME = "Which emperor ruled Rome after the year 200?"  # two test queries share this text
MATH = ["Compute 3 plus 4 times 7", "Compute the sum of 12 and 9", "Compute 8 times 6 plus 2",
        "Compute 5 minus 2 times 3", "Compute the product of 7 and 7", "Compute 9 plus 10 plus 11"]
HIST = ["Which emperor ruled Rome in 100?", "Which dynasty ruled China in 1400?", "Which king ruled France in 1700?",
        "Which emperor ruled Byzantium in 600?", "Which queen ruled England in 1600?", "Which sultan ruled Egypt?"]
# test queries: (id, text, task, {agent: (score, recorded cost)})
TEST = [
    ("m1", "Compute 6 plus 5 times 2", "math", {"big": (1.0, 0.010), "small": (1.0, 0.001)}),
    ("m2", "Compute the sum of 4 and 15", "math", {"big": (1.0, 0.020), "small": (0.0, 0.002)}),
    ("h1", SAME, "history", {"big": (1.0, 0.010), "small": (0.0, 0.001)}),
    ("h2", SAME, "history", {"big": (0.0, 0.030), "small": (1.0, 0.003)}),
]


def rows() -> list[OutcomeRow]:
    out = []
    # train: small wins every math query, big two of six; big wins every history query, small none
    for i, text in enumerate(MATH):
        out.append(OutcomeRow(0, f"tm{i}", text, "big", float(i < 2), task="math", split="train", cost_usd=0.01))
        out.append(OutcomeRow(0, f"tm{i}", text, "small", 1.0, task="math", split="train", cost_usd=0.001))
    for i, text in enumerate(HIST):
        out.append(OutcomeRow(0, f"th{i}", text, "big", 1.0, task="history", split="train", cost_usd=0.01))
        out.append(OutcomeRow(0, f"th{i}", text, "small", 0.0, task="history", split="train", cost_usd=0.001))
    for qid, text, task, rec in TEST:
        for agent, (score, cost) in rec.items():
            out.append(OutcomeRow(0, qid, text, agent, score, task=task, split="test", cost_usd=cost))
    return [dataclasses.replace(r, line=n + 1) for n, r in enumerate(out)]


@pytest.fixture
def url(db_url):
    with session(db_url) as s:
        ingest_outcomes(s, HB, rows(), source_label="test", skills_from_task=True, synthetic=True)
        s.commit()
    return db_url


def run(url, routers, lambdas=(0.0,), **kw):
    with session(url) as s:
        return {(r.router, r.lam): r for r in evaluate(s, HB, routers=routers, lambdas=lambdas, **kw)}


def test_hand_computed_accuracy_cost_and_calls(url):
    got = run(url, ["true-label", "oracle", "best-single", "cheapest", "skill"])
    true = got[("true-label", 0.0)]  # math -> small, history -> big: m1 1, m2 0, h1 1, h2 0 (scored by id)
    assert (true.n_queries, true.n_scored, true.accuracy) == (4, 4, 0.5)
    assert true.mean_cost_usd == pytest.approx((0.001 + 0.002 + 0.010 + 0.030) / 4)
    assert true.calls_by_agent == {"big": 2, "small": 2} and true.skill_identification == 1.0
    oracle = got[("oracle", 0.0)]  # m1 tie -> the cheaper small; m2 big; h1 big; h2 small
    assert oracle.accuracy == 1.0 and oracle.calls_by_agent == {"big": 2, "small": 2}
    assert oracle.mean_cost_usd == pytest.approx((0.001 + 0.020 + 0.010 + 0.003) / 4)
    assert oracle.skill_identification is None
    best = got[("best-single", 0.0)]  # big: 8/12 on train against small's 6/12
    assert (best.accuracy, best.calls_by_agent) == (0.75, {"big": 4})
    assert best.mean_cost_usd == pytest.approx((0.010 + 0.020 + 0.010 + 0.030) / 4)
    cheap = got[("cheapest", 0.0)]
    assert (cheap.accuracy, cheap.calls_by_agent) == (0.5, {"small": 4})
    skill = got[("skill", 0.0)]  # the classifier finds both tasks from the text alone
    assert skill.skill_identification == 1.0 and skill.calls_by_agent == true.calls_by_agent
    assert skill.accuracy == 0.5 and skill.split == "test" and skill.mode == "answer"


def test_lambda_moves_the_skill_router_to_the_cheaper_agent(url):
    got = run(url, ["true-label"], lambdas=(0.0, 10.0), cost_unit="normalised")
    assert got[("true-label", 10.0)].calls_by_agent == {"small": 4}
    assert got[("true-label", 10.0)].cost_ref_agent == "big"  # the best-single agent's cost is C_ref
    assert got[("true-label", 0.0)].calls_by_agent == {"big": 2, "small": 2}


def test_replay_by_id_is_exact_when_two_queries_share_a_text(url):
    with session(url) as s:
        model = routing_model(s, HB)
    opts = RouteOptions(router="oracle", execute="replay", lam=0.0)
    h1, h2 = route(model, SAME, opts, query_ref="h1"), route(model, SAME, opts, query_ref="h2")
    assert (h1.query_ref, h1.chosen_agent, h1.outcome) == ("h1", "big", 1.0)
    assert (h2.query_ref, h2.chosen_agent, h2.outcome) == ("h2", "small", 1.0)
    big = RouteOptions(router="best-single", execute="replay", lam=0.0)
    assert route(model, SAME, big, query_ref="h1").outcome == 1.0
    assert route(model, SAME, big, query_ref="h2").outcome == 0.0
    with pytest.raises(ValueError, match="no evidence query with id 'nope'"):
        route(model, SAME, opts, query_ref="nope")


def test_bad_router_split_and_lambda_are_clear_errors(url):
    with pytest.raises(ValueError, match="unknown router 'best'"):
        run(url, ["best"])
    with pytest.raises(ValueError, match="unknown split"):
        run(url, ["skill"], split="dev")
    with pytest.raises(ValueError, match="lambda must be >= 0"):
        run(url, ["skill"], lambdas=(-1.0,))
    with pytest.raises(ValueError, match="no val query"):
        run(url, ["skill"], split="val")


KEYS = {"handbook", "version", "router", "lambda", "split", "mode", "cost_unit", "cost_ref", "cost_ref_agent",
        "n_queries", "n_scored", "accuracy", "mean_cost_usd", "calls_by_agent", "skill_identification",
        "cost_scope"}


def test_cli_json_has_the_exact_keys_per_router_and_lambda(url):
    res = CliRunner().invoke(app, ["--db", url, "evaluate", HB, "--split", "test", "--router", "skill,oracle",
                                   "--lambdas", "0,0.5", "--json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.output)
    assert [(d["router"], d["lambda"]) for d in data] == [("skill", 0.0), ("skill", 0.5), ("oracle", 0.0),
                                                          ("oracle", 0.5)]
    assert all(set(d) == KEYS for d in data)
    assert data[2]["accuracy"] == 1.0 and data[2]["n_queries"] == 4 and data[0]["split"] == "test"
    table = CliRunner().invoke(app, ["--db", url, "evaluate", HB, "--router", "true-label", "--lambda", "0"])
    assert table.exit_code == 0 and "true-label" in table.output and "0.500" in table.output
    bad = CliRunner().invoke(app, ["--db", url, "evaluate", HB, "--lambda", "0", "--lambdas", "0,1"])
    assert bad.exit_code != 0
