import numpy as np
import pandas as pd
from support.refinement_data import SkillPlan, build, homogeneous_plan

from skillorchestra_core.refinement import stats
from skillorchestra_core.refinement.detect import DetectorConfig, detect_merges, detect_splits
from skillorchestra_core.refinement.evidence import evidence_from_frames
from skillorchestra_core.refinement.reference_rules import reference_merges, reference_splits
from skillorchestra_core.refinement.textgroups import two_groups

AGENTS = ["a1", "a2", "a3", "a4"]
HIGH_LOW = np.array([0.9, 0.85, 0.2, 0.15])
LOW_HIGH = HIGH_LOW[::-1].copy()


def test_bayes_factors_favour_the_true_model():
    # Clearly different groups: split wins; equal rates: the one-rate model wins (Occam penalty).
    assert stats.split_log_bf([[40, 5]], [[5, 40]])[0] > 20
    assert stats.split_log_bf([[20, 20]], [[20, 20]])[0] < 0
    assert stats.merge_log_bf(20, 20, 20, 20) > 0 > stats.merge_log_bf(40, 5, 5, 40)
    # Weighted (fractional) counts are fine, and the two tests are mirror images on the same data.
    assert np.isclose(stats.merge_log_bf(3.5, 1.5, 2.0, 4.0), -stats.split_log_bf([[3.5, 2.0]], [[1.5, 4.0]])[0])


def test_text_groups_follow_the_topics_and_are_seeded():
    rng = np.random.default_rng(1)
    texts = [f"refund invoice customer {i}" for i in range(10)] + [f"comet orbit planet {i}" for i in range(10)]
    labels = two_groups(texts, rng)
    assert labels is not None and labels[:10].tolist() == [0] * 10 and labels[10:].tolist() == [1] * 10
    assert two_groups(texts, np.random.default_rng(1)).tolist() == two_groups(texts, np.random.default_rng(1)).tolist()
    assert two_groups(["same words"] * 6, rng) is None  # nothing to separate


def test_planted_split_is_found_with_its_groups_and_evidence():
    rng = np.random.default_rng(7)
    ev = build([SkillPlan("m.cat.mixed", [HIGH_LOW, LOW_HIGH], 80), homogeneous_plan("m.cat.plain", 4, rng, 80)],
               AGENTS, rng)
    found = detect_splits(ev, np.random.default_rng(0))
    assert [c.skills for c in found.candidates] == [["m.cat.mixed"]]
    cand = found.candidates[0]
    assert cand.statistic > stats.LN10 and cand.detector == "bayes"
    assert sorted(len(g.query_ids) for g in cand.groups) == [40, 40]
    assert {a.agent for a in cand.agents} == set(AGENTS)
    assert all(sum(a.successes) + sum(a.failures) == 80 for a in cand.agents)
    assert all(g.examples and g.terms for g in cand.groups)
    plain = [x for x in found.scored if x.skills == ("m.cat.plain",)][0]
    assert not plain.candidate and plain.statistic < stats.LN10


def test_small_groups_are_not_tested():
    rng = np.random.default_rng(3)
    ev = build([SkillPlan("m.cat.tiny", [HIGH_LOW, LOW_HIGH], 10)], AGENTS, rng)
    found = detect_splits(ev, rng, DetectorConfig(min_group_weight=8))
    assert found.candidates == [] and "evidence queries" in found.scored[0].reason


def test_planted_merge_is_found_and_different_profiles_are_not():
    rng = np.random.default_rng(11)
    same = rng.uniform(0.2, 0.9, 4)
    ev = build([SkillPlan("m.cat.x", [same], 200), SkillPlan("m.cat.y", [same], 200),
                SkillPlan("m.cat.z", [HIGH_LOW], 200), SkillPlan("m.cat.w", [LOW_HIGH], 200)], AGENTS, rng)
    found = detect_merges(ev)
    assert [c.skills for c in found.candidates] == [["m.cat.x", "m.cat.y"]]
    cand = found.candidates[0]
    assert cand.statistic > stats.LN10 and [g.label for g in cand.groups] == ["m.cat.x", "m.cat.y"]
    assert all(len(a.successes) == 2 for a in cand.agents)


def test_skills_without_evidence_are_never_merge_candidates_but_the_reference_rule_merges_them():
    rng = np.random.default_rng(5)
    ev = build([SkillPlan("m.cat.x", [HIGH_LOW], 40)], AGENTS, rng)
    extra = pd.DataFrame([("m.cat.empty1", "m", "m.cat", "e1"), ("m.cat.empty2", "m", "m.cat", "e2")],
                         columns=ev.skills.columns)
    ev = type(ev)(ev.direct, ev.counts, ev.texts, pd.concat([ev.skills, extra], ignore_index=True), ev.agents)
    assert detect_merges(ev).candidates == []
    assert [c.skills for c in reference_merges(ev).candidates] == [["m.cat.empty1", "m.cat.empty2"]]


def test_reference_split_rule_uses_variance_across_agents():
    rng = np.random.default_rng(2)
    ev = build([SkillPlan("m.cat.spread", [np.array([0.95, 0.95, 0.05, 0.05])], 40),
                SkillPlan("m.cat.mixed", [HIGH_LOW, LOW_HIGH], 40)], AGENTS, rng)
    keys = [c.skills[0] for c in reference_splits(ev).candidates]
    assert "m.cat.spread" in keys and "m.cat.mixed" not in keys  # the mixture's rates average out


def test_only_train_evidence_is_read():
    outcomes = pd.DataFrame({"query_id": [1, 1, 2, 2], "split": ["train", "train", "val", "val"],
                             "agent": ["a", "b"] * 2, "mode": "m", "score": [1.0, 0.0, 1.0, 1.0]})
    att = pd.DataFrame({"query_id": [1, 2], "mode": "m", "skill": "k", "weight": 1.0, "attributed_by": "label"})
    skills = pd.DataFrame({"skill": ["k"], "mode": ["m"], "parent": [None], "name": ["k"]})
    ev = evidence_from_frames(outcomes, att, skills, pd.DataFrame({"agent": ["a", "b"], "mode": "m"}),
                              {1: "train text", 2: "val text"})
    assert set(ev.direct["query_id"]) == {1} and ev.texts == {1: "train text"}
    assert ev.counts["S"].sum() + ev.counts["F"].sum() == 2
