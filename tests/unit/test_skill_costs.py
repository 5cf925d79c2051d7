"""Per-(agent, skill) cost estimates: attribution-weighted train costs, rolled up the skill tree and shrunk toward
the mode cost, on a hand-computed case; then how routing weighs them (single decision, batch and evaluation agree)
and the `cost_scope` setting that keeps the mode cost."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from skillorchestra_core.evidence.skill_costs import skill_costs
from skillorchestra_core.routing.activation import Activation
from skillorchestra_core.routing.batch import batch_choose
from skillorchestra_core.routing.engine import RouteOptions, decide_step
from skillorchestra_core.routing.evaluate import choose_all, query_k
from skillorchestra_core.routing.model import RoutingModel, table_from_arrays
from skillorchestra_core.routing.routers import DecisionInput, SkillRouter
from skillorchestra_core.routing.snapshot import from_snapshot, to_snapshot
from skillorchestra_core.routing.trace import ActiveSkill
from skillorchestra_core.selection.replay import choose_grid

NAN = float("nan")


def _frames():
    skills = pd.DataFrame({"skill": ["answer.math", "answer.math.add", "answer.hist", "answer.geo"],
                           "mode": "answer", "parent": [None, "answer.math", None, None]})
    agents = pd.DataFrame({"agent": ["big", "small"], "mode": "answer", "input_price_per_m": [NAN, NAN],
                           "output_price_per_m": [NAN, NAN]})
    # (query, agent, recorded cost); small's q3 has no cost, no tokens and no price: it is left out
    runs = [(1, "big", 0.010), (1, "small", 0.001), (2, "big", 0.030), (2, "small", 0.003),
            (3, "big", 0.020), (3, "small", NAN), (4, "big", 0.002), (4, "small", 0.001)]
    outcomes = pd.DataFrame({"query_id": [q for q, _, _ in runs], "agent": [a for _, a, _ in runs], "mode": "answer",
                             "cost_usd": [c for _, _, c in runs], "prompt_tokens": NAN, "completion_tokens": NAN})
    attributions = pd.DataFrame({"query_id": [1, 2, 2, 3, 4], "mode": "answer",
                                 "skill": ["answer.math.add", "answer.math.add", "answer.hist", "answer.hist",
                                           "answer.math"], "weight": [1.0, 0.5, 0.5, 1.0, 1.0]})
    mode_cost = pd.DataFrame({"agent": ["big", "small"], "mode": "answer", "cost": [0.02, 0.002]})
    return outcomes, attributions, skills, agents, mode_cost


def _cell(table: pd.DataFrame, agent: str, skill: str) -> tuple[float, float]:
    row = table[(table["agent"] == agent) & (table["skill"] == skill)].iloc[0]
    return float(row["cost"]), float(row["n_cost"])


def test_weighted_costs_roll_up_and_shrink_by_hand():
    out = skill_costs(*_frames())  # 5 pseudo-calls at the mode cost
    assert len(out) == 8 and set(out.columns) == {"agent", "mode", "skill", "cost", "n_cost"}
    # big on answer.math.add: q1 (w 1, 0.010) + q2 (w 0.5, 0.030): W = 1.5, WC = 0.025
    assert _cell(out, "big", "answer.math.add") == pytest.approx(((0.025 + 5 * 0.02) / 6.5, 1.5), rel=1e-12)
    # the parent counts its own query q4 (w 1, 0.002) plus its child's: W = 2.5, WC = 0.027
    assert _cell(out, "big", "answer.math") == pytest.approx(((0.027 + 5 * 0.02) / 7.5, 2.5), rel=1e-12)
    assert _cell(out, "big", "answer.hist") == pytest.approx(((0.035 + 5 * 0.02) / 6.5, 1.5), rel=1e-12)
    # small's q3 has no usable cost: only q2's half-call counts
    assert _cell(out, "small", "answer.hist") == pytest.approx(((0.0015 + 5 * 0.002) / 5.5, 0.5), rel=1e-12)
    # never seen: exactly the mode cost, from no call
    assert _cell(out, "big", "answer.geo") == (0.02, 0.0) and _cell(out, "small", "answer.geo") == (0.002, 0.0)


def test_without_shrinkage_a_skill_costs_its_weighted_mean_and_more_calls_pull_harder():
    raw = skill_costs(*_frames(), shrink=0.0)
    assert _cell(raw, "big", "answer.math.add")[0] == pytest.approx(0.025 / 1.5, rel=1e-12)
    assert _cell(raw, "small", "answer.math")[0] == pytest.approx((0.001 + 0.0015 + 0.001) / 2.5, rel=1e-12)
    # shrinkage sits between the raw mean and the mode cost, nearer the mode cost the stronger it is
    raw_c, mode_c = 0.025 / 1.5, 0.02
    costs = [_cell(skill_costs(*_frames(), shrink=m), "big", "answer.math.add")[0] for m in (1.0, 5.0, 50.0)]
    assert raw_c < costs[0] < costs[1] < costs[2] < mode_c
    with pytest.raises(ValueError, match="pseudo-calls"):
        skill_costs(*_frames(), shrink=-1.0)


def test_no_evidence_prices_every_skill_at_the_mode_cost():
    outcomes, attributions, skills, agents, mode_cost = _frames()
    out = skill_costs(outcomes.iloc[0:0], attributions, skills, agents, mode_cost)
    assert out.groupby("agent")["cost"].unique().map(list).to_dict() == {"big": [0.02], "small": [0.002]}
    assert (out["n_cost"] == 0).all()


def _table():
    # a: strong and cheap on x, dear on y; b: weaker, the same price everywhere. Mode costs: a 0.010, b 0.005.
    return table_from_arrays("answer", ["a", "b"], ["x", "y"], [[0.8, 0.8], [0.7, 0.7]], [0.010, 0.005],
                             skill_cost=[[0.002, 0.018], [0.005, 0.005]], skill_cost_n=[[40, 10], [25, 25]])


def _decide(table, skills, weights, lam, scope):
    return DecisionInput(table, table.indices(skills), np.asarray(weights, float), lam, cost_scope=scope)


def test_the_skill_router_weighs_the_query_s_skill_costs():
    t = _table()  # C_ref = a's mode cost 0.010 (a has the higher pooled competence)
    on_x = _decide(t, ["x"], [1.0], 0.5, "skill")
    assert on_x.k.tolist() == pytest.approx([0.2, 0.5]) and on_x.cost_calls.tolist() == [40, 25]
    assert t.agents[SkillRouter().decide(on_x).chosen] == "a"  # 0.8 - 0.1 beats 0.7 - 0.25
    assert t.agents[SkillRouter().decide(_decide(t, ["x"], [1.0], 0.5, "mode")).chosen] == "b"  # 0.3 < 0.45
    assert t.agents[SkillRouter().decide(_decide(t, ["y"], [1.0], 0.5, "skill")).chosen] == "b"
    mixed = _decide(t, ["x", "y"], [0.75, 0.25], 0.5, "skill")
    assert mixed.cost.tolist() == pytest.approx([0.75 * 0.002 + 0.25 * 0.018, 0.005])
    assert mixed.cost_calls.tolist() == pytest.approx([32.5, 25.0])
    no_skill = _decide(t, [], [], 0.5, "skill")  # no active skill: the mode cost
    assert no_skill.cost.tolist() == [0.010, 0.005] and no_skill.k.tolist() == pytest.approx([1.0, 0.5])


def test_single_batch_and_evaluation_choose_alike_in_both_scopes():
    t = _table()
    rows = [(["x"], [1.0]), (["y"], [1.0]), (["x", "y"], [0.5, 0.5]), (["x", "y"], [0.9, 0.1]), ([], [])]
    idx = np.zeros((len(rows), 2), np.int64)
    w = np.zeros((len(rows), 2))
    dense = np.zeros((len(rows), 2))
    for i, (keys, ws) in enumerate(rows):
        idx[i, :len(keys)], w[i, :len(keys)] = t.indices(keys), ws
        dense[i, t.indices(keys)] = ws
    lambdas = np.array([0.0, 0.2, 0.5, 1.0, 3.0])
    picks = {}
    for scope in ("skill", "mode"):
        single = np.array([[SkillRouter().decide(_decide(t, keys, ws, lam, scope)).chosen for keys, ws in rows]
                           for lam in lambdas])
        batch = np.array([batch_choose(t, idx, w, lam, cost_scope=scope)[0] for lam in lambdas])
        c = np.where(dense.sum(1, keepdims=True) > 0, dense @ t.mean.T, t.general)
        evaluated = choose_all(t, c, lambdas, "normalised", query_k(t, dense, "normalised", scope))
        k = query_k(t, dense, "normalised", scope)
        swept = choose_grid(c[None], k[None] if k.ndim == 2 else k, t.tie_rank, lambdas)[0]  # selection's replay
        assert np.array_equal(single, batch) and np.array_equal(single, evaluated), scope
        assert np.array_equal(single, swept), scope
        picks[scope] = single
    assert not np.array_equal(picks["skill"], picks["mode"])  # the scopes really differ on this table


def test_the_trace_says_which_cost_was_used_and_from_how_many_calls():
    t = _table()
    act = Activation(skills=[ActiveSkill(skill="x", weight=1.0)], source="test")
    step = decide_step(0, t, act, RouteOptions(lam=0.5, cost_scope="skill"), lazy=False)
    a = step.candidate("a")
    assert step.cost_scope == "skill" and step.chosen == "a"
    assert (a.cost, a.mode_cost, a.cost_calls, a.cost_norm) == pytest.approx((0.002, 0.010, 40.0, 0.2))
    moded = decide_step(0, t, act, RouteOptions(lam=0.5, cost_scope="mode"), lazy=False)
    assert moded.cost_scope == "mode" and moded.chosen == "b" and moded.candidate("a").cost == 0.010
    dumped = json.loads(step.model_dump_json())
    assert dumped["cost_scope"] == "skill" and dumped["candidates"][0]["cost_calls"] == 40.0


def test_the_setting_picks_the_scope_and_bad_values_are_refused(monkeypatch):
    from skillorchestra_core.settings import get_settings

    t = _table()
    monkeypatch.setenv("SKILLORCHESTRA_COST_SCOPE", "mode")
    get_settings.cache_clear()
    try:
        assert RouteOptions().cost_scope == "mode" and _decide(t, ["x"], [1.0], 0.5, None).cost_scope == "mode"
    finally:
        monkeypatch.delenv("SKILLORCHESTRA_COST_SCOPE")
        get_settings.cache_clear()
    assert RouteOptions().cost_scope == "skill"
    with pytest.raises(ValueError, match="unknown cost scope 'agent'"):
        RouteOptions(cost_scope="agent")


def test_snapshots_carry_skill_costs_and_old_snapshots_fall_back_to_mode_costs():
    t = _table()
    model = RoutingModel("h", 1, "abc", {"answer": t}, {})
    snap = json.loads(json.dumps(to_snapshot(model)))
    assert snap["format_version"] == 2
    again = from_snapshot(snap).table("answer")
    assert np.array_equal(again.skill_cost, t.skill_cost) and np.array_equal(again.skill_cost_n, t.skill_cost_n)
    for mode in snap["modes"].values():  # a format-1 snapshot: no per-skill costs
        for key in ("cost_n", "skill_cost", "skill_cost_n"):
            mode.pop(key)
    snap["format_version"] = 1
    old = from_snapshot(snap).table("answer")
    assert old.skill_cost.tolist() == [[0.010, 0.010], [0.005, 0.005]] and not old.skill_cost_n.any()
    snap["format_version"] = 99
    with pytest.raises(Exception, match="format_version 99 is newer"):
        from_snapshot(snap)
    assert math.isclose(float(t.query_costs(np.array([[0.0, 0.0]]))[0, 0]), 0.010)


def test_llmrouter_test_split_meets_the_quality_bar_with_skill_costs(db_url, llmrouter_dir):
    """By text only, learned from train: the skill router at lambda 0 within half a point of the true-label router,
    and some lambda at >= 0.625 accuracy for at most 40% of the best single model's mean cost."""
    from skillorchestra_core.db import session
    from skillorchestra_core.formats.llmrouter import import_llmrouter
    from skillorchestra_core.routing.evaluate import evaluate

    with session(db_url) as s:
        import_llmrouter(s, llmrouter_dir, "lr")
        s.commit()
    lambdas = (0.0, 0.05, 0.08, 0.1, 0.12)
    with session(db_url) as s:
        got = {(r.router, r.lam): r for r in evaluate(s, "lr", split="test", lambdas=lambdas, cost_scope="skill",
                                                       routers=("skill", "true-label", "best-single"))}
    skill0, label0 = got[("skill", 0.0)].accuracy, got[("true-label", 0.0)].accuracy
    single = got[("best-single", 0.0)]
    assert got[("skill", 0.0)].n_queries == 1198 and got[("skill", 0.0)].cost_scope == "skill"
    assert skill0 >= label0 - 0.005 and skill0 >= 0.664, (skill0, label0)
    cheap = [(lam, got[("skill", lam)].accuracy, got[("skill", lam)].mean_cost_usd) for lam in lambdas
             if got[("skill", lam)].accuracy >= 0.625
             and got[("skill", lam)].mean_cost_usd <= 0.4 * single.mean_cost_usd]
    assert cheap, [(lam, got[("skill", lam)].accuracy, got[("skill", lam)].mean_cost_usd) for lam in lambdas]
