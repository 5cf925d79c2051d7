"""Generated evidence with known structure for the refinement detectors: text groups, agent rates, siblings."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from skillorchestra_core.refinement.evidence import RefinementEvidence, evidence_from_frames

TOPICS = [
    ("invoice", "refund", "customer", "billing"), ("orbit", "planet", "telescope", "comet"),
    ("violin", "sonata", "orchestra", "tempo"), ("glacier", "river", "valley", "erosion"),
    ("kernel", "thread", "mutex", "scheduler"), ("harvest", "wheat", "soil", "irrigation"),
]


@dataclass(frozen=True)
class SkillPlan:
    key: str
    rates: list[np.ndarray]  # per text group: one success rate per agent
    queries: int = 60
    parent: str | None = "m.cat"


def _text(topic: tuple[str, ...], rng: np.random.Generator) -> str:
    words = list(rng.choice(topic, size=3)) + [str(int(rng.integers(1, 999)))]
    return "question about " + " ".join(words)


def build(plans: list[SkillPlan], agents: list[str], rng: np.random.Generator, mode: str = "m") -> RefinementEvidence:
    rows, att, texts = [], [], {}
    qid = 0
    for s_i, plan in enumerate(plans):
        for g, rates in enumerate(plan.rates):
            topic = TOPICS[(2 * s_i + g) % len(TOPICS)]
            for _ in range(plan.queries // len(plan.rates)):
                qid += 1
                texts[qid] = _text(topic, rng)
                att.append((qid, mode, plan.key, 1.0, "label"))
                for a, rate in zip(agents, rates):
                    rows.append((qid, "train", a, mode, float(rng.random() < rate)))
    outcomes = pd.DataFrame(rows, columns=["query_id", "split", "agent", "mode", "score"])
    attributions = pd.DataFrame(att, columns=["query_id", "mode", "skill", "weight", "attributed_by"])
    parents = sorted({p.parent for p in plans if p.parent})
    skills = pd.DataFrame([(p.key, mode, p.parent, p.key) for p in plans] + [(k, mode, None, k) for k in parents],
                          columns=["skill", "mode", "parent", "name"])
    return evidence_from_frames(outcomes, attributions, skills, pd.DataFrame({"agent": agents, "mode": mode}), texts)


def homogeneous_plan(key: str, agents: int, rng: np.random.Generator, queries: int = 60) -> SkillPlan:
    """Two text topics, ONE agent profile: a split here is a false positive."""
    rates = rng.uniform(0.2, 0.9, size=agents)
    return SkillPlan(key, [rates, rates], queries)
