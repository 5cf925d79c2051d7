import numpy as np
import pandas as pd
import pytest

from skillorchestra_core.learning.competence import PriorConfig, competence_table


def frames():
    outcomes = pd.DataFrame({
        "query_id": [1, 1, 2, 2, 3, 3],
        "agent": ["a", "b", "a", "b", "a", "b"],
        "mode": ["m"] * 6,
        "score": [1.0, 0.0, 1.0, 1.0, 0.0, 1.0],
    })
    attributions = pd.DataFrame({
        "query_id": [1, 2, 2, 3], "mode": ["m"] * 4, "skill": ["x", "x", "y", "y"], "weight": [1.0, 0.5, 0.5, 1.0],
    })
    skills = pd.DataFrame({"skill": ["x", "y", "z"], "mode": ["m"] * 3, "parent": [None, None, None]})
    agents = pd.DataFrame({"agent": ["a", "b"], "mode": ["m", "m"]})
    return outcomes, attributions, skills, agents


def row(table, agent, skill):
    return table[(table.agent == agent) & (table.skill == skill)].iloc[0]


def test_weighted_evidence_counts_with_flat_prior():
    t = competence_table(*frames(), prior=PriorConfig("flat"))
    ax = row(t, "a", "x")  # q1 success w1 + q2 success w0.5
    assert (ax.S, ax.F) == (1.5, 0.0)
    assert ax.alpha == 2.5 and ax.beta == 1.0
    ay = row(t, "a", "y")  # q2 success w0.5 + q3 failure w1
    assert (ay.S, ay.F) == (0.5, 1.0)
    assert ay.empirical_rate == pytest.approx(1 / 3)
    assert ay["mean"] == pytest.approx(1.5 / 3.5)


def test_unseen_skill_scores_the_pooled_rate_under_the_hierarchical_prior():
    t = competence_table(*frames(), prior=PriorConfig("hierarchical", 2.0))
    az = row(t, "a", "z")
    pooled = (2 + 1) / (3 + 2)  # a: 2 successes in 3 trajectories of mode m
    assert az.n == 0 and np.isnan(az.empirical_rate)
    assert az["mean"] == pytest.approx(pooled)
    assert az.basis == "prior only"
    flat = competence_table(*frames(), prior=PriorConfig("flat"))
    assert row(flat, "a", "z")["mean"] == 0.5


def test_parent_skill_summarises_its_subtree_without_double_counting():
    outcomes, attributions, _skills, agents = frames()
    skills = pd.DataFrame({"skill": ["p", "x", "y"], "mode": ["m"] * 3, "parent": [None, "p", "p"]})
    t = competence_table(outcomes, attributions, skills, agents, prior=PriorConfig("flat"))
    ap = row(t, "a", "p")
    # Every query's weights sum to 1 under the parent: 3 trajectories of a, 2 successes.
    assert (ap.S, ap.F) == (2.0, 1.0)


def test_imported_counts_are_kept_apart_from_evidence():
    outcomes, attributions, skills, agents = frames()
    imported = pd.DataFrame({"agent": ["b"], "mode": ["m"], "skill": ["z"], "alpha": [4.0], "beta": [2.0]})
    t = competence_table(outcomes, attributions, skills, agents, imported, prior=PriorConfig("flat"))
    bz = row(t, "b", "z")
    assert bz.n == 0 and bz.n_imported == 4.0 and bz.basis == "imported"
    assert (bz.alpha, bz.beta) == (4.0, 2.0)  # the reference's own Beta(1,1) + 3 wins, 1 loss


def test_unknown_prior_is_rejected():
    with pytest.raises(ValueError):
        PriorConfig("uniform")
