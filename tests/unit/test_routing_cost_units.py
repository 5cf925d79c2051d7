"""Lambda's scale: C_ref is the best-single agent's cost by default, the most expensive agent's with "max", 1 USD
with "usd"; the choice and C_ref are recorded in the trace."""

from __future__ import annotations

import numpy as np
import pytest

from skillorchestra_core.routing.activation import Activation
from skillorchestra_core.routing.engine import RouteOptions, decide_step
from skillorchestra_core.routing.model import table_from_arrays
from skillorchestra_core.routing.trace import ActiveSkill
from skillorchestra_core.routing.utility import cost_reference, cost_unit_name, normalised_costs

AGENTS = ["a", "b", "c", "d"]
COST = np.array([1.0, 2.0, 4.0, 30.0])  # d: a pricey outlier that is not the best
GENERAL = np.array([0.6, 0.8, 0.8, 0.5])  # b and c tie as best single: the cheaper b is the reference


def test_reference_cost_per_unit():
    assert cost_reference(COST, "normalised", GENERAL, AGENTS) == (2.0, 1)
    assert cost_reference(COST, "max", GENERAL, AGENTS) == (30.0, 3)
    assert cost_reference(COST, "usd", GENERAL, AGENTS) == (1.0, None)
    k, c_ref = normalised_costs(COST, "normalised", GENERAL, AGENTS)
    assert c_ref == 2.0 and k.tolist() == [0.5, 1.0, 2.0, 15.0]
    assert normalised_costs(COST, "max", GENERAL, AGENTS)[0].tolist() == pytest.approx([1 / 30, 2 / 30, 4 / 30, 1.0])
    assert normalised_costs(COST, "usd", GENERAL, AGENTS)[0].tolist() == COST.tolist()


def test_aliases_and_unknown_units():
    assert cost_unit_name("best-single") == "normalised" and cost_unit_name("most-expensive") == "max"
    with pytest.raises(ValueError, match="unknown cost unit 'euro'"):
        cost_unit_name("euro")
    with pytest.raises(ValueError, match="unknown cost unit"):
        RouteOptions(cost_unit="euro")
    assert RouteOptions(cost_unit="most-expensive").cost_unit == "max"


def test_a_free_best_single_agent_falls_back_to_the_most_expensive():
    assert cost_reference(np.array([0.0, 3.0]), "normalised", np.array([0.9, 0.5]), ["free", "paid"]) == (3.0, 1)
    assert normalised_costs(np.zeros(2), "normalised", np.array([0.9, 0.5]))[0].tolist() == [0.0, 0.0]


def test_lambda_means_competence_given_up_per_default_cost_and_the_trace_records_it():
    # one skill; b is the best single agent: at lambda = 0.1, a (0.05 less competent, half b's cost) wins, since
    # 0.1 x (1 - 0.5) = 0.05 of saved penalty equals the competence given up; ties go to the cheaper agent.
    table = table_from_arrays("answer", AGENTS, ["s"], [[0.75], [0.8], [0.8], [0.5]], COST, general=GENERAL)
    act = Activation([ActiveSkill(skill="s", weight=1.0)], "test")
    step = decide_step(0, table, act, RouteOptions(lam=0.1))
    assert (step.cost_ref, step.cost_ref_agent, step.chosen) == (2.0, "b", "a")
    assert step.candidate("d").cost_norm == 15.0
    before = decide_step(0, table, act, RouteOptions(lam=0.09))
    assert before.chosen == "b"
    dearest = decide_step(0, table, act, RouteOptions(lam=0.1, cost_unit="max"))
    assert (dearest.cost_ref, dearest.cost_ref_agent, dearest.chosen) == (30.0, "d", "b")
    usd = decide_step(0, table, act, RouteOptions(lam=0.01, cost_unit="usd"))
    assert (usd.cost_ref, usd.cost_ref_agent, usd.chosen) == (1.0, None, "b")
