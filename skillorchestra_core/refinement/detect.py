"""Split and merge detectors over a version's train evidence (pure; seeded through an injected Generator).

- Split: a skill's directly attributed queries are cut in two by their TEXT (`textgroups.two_groups`); the outcomes
  then decide whether one agent profile per group explains them better than one profile for all (`split_log_bf`,
  summed over agents). Each group must hold `min_group_weight` evidence queries.
- Merge: two LEAF skills of one mode with the same parent (siblings, or both top-level: merging across the tree would
  leave the merged skill without a place; a parent's profile is a mixture of its children's, and two mixtures can agree
  while every child differs) whose agent profiles are indistinguishable: summed over agents, the shared-rate
  model beats separate rates by the threshold, and no single agent tells them apart (its own log BF for separate
  rates stays below the threshold). Every compared agent needs `min_merge_evidence` on both skills, so a skill with
  no evidence is never a candidate.
- `reference`: the reference code's rules, kept for comparison (variance of agents' empirical rates >= 0.15 for a
  split; exactly equal empirical rates, 0 when unseen, for a merge).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from skillorchestra_core.refinement import stats
from skillorchestra_core.refinement.evidence import RefinementEvidence
from skillorchestra_core.refinement.records import AgentEvidence, CandidateRecord, GroupEvidence
from skillorchestra_core.refinement.textgroups import distinguishing_terms, two_groups

REFERENCE_SPLIT_VARIANCE = 0.15


@dataclass(frozen=True)
class DetectorConfig:
    split_threshold: float = stats.LN10
    merge_threshold: float = stats.LN10
    min_group_weight: float = 8.0  # evidence (summed attribution weight) per text group
    min_merge_evidence: float = 8.0  # per agent, on each skill of a pair
    max_examples: int = 5


@dataclass(frozen=True)
class Scored:
    """Every test that ran, candidate or not (for reports and false-positive measurements)."""

    kind: str
    skills: tuple[str, ...]
    statistic: float
    candidate: bool
    reason: str = ""


@dataclass
class Detection:
    candidates: list[CandidateRecord] = field(default_factory=list)
    scored: list[Scored] = field(default_factory=list)


def _group_counts(rows: pd.DataFrame, agents: list[str], labels: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """(agents, 2) weighted successes and failures of `rows` (query_id, agent, weight, score) per text group."""
    g = rows.assign(group=rows["query_id"].map(labels), S=rows["weight"] * rows["score"],
                    F=rows["weight"] * (1.0 - rows["score"]))
    table = g.groupby(["agent", "group"])[["S", "F"]].sum()
    full = pd.MultiIndex.from_product([agents, [0, 1]], names=["agent", "group"])
    table = table.reindex(full, fill_value=0.0)
    return table["S"].to_numpy().reshape(len(agents), 2), table["F"].to_numpy().reshape(len(agents), 2)


def _agent_rows(agents: list[str], s: np.ndarray, f: np.ndarray, log_bf: np.ndarray) -> list[AgentEvidence]:
    return [AgentEvidence(agent=a, successes=[round(float(x), 6) for x in s[i]],
                          failures=[round(float(x), 6) for x in f[i]], log_bf=round(float(log_bf[i]), 6))
            for i, a in enumerate(agents)]


def _split_one(ev: RefinementEvidence, skill: str, rows: pd.DataFrame, rng: np.random.Generator,
               cfg: DetectorConfig, force: bool = False) -> tuple[Scored, CandidateRecord | None]:
    weights = rows.groupby("query_id")["weight"].first()
    qids = [int(q) for q in weights.index]
    texts = [ev.texts.get(q, "") for q in qids]
    labels = two_groups(texts, rng)
    if labels is None:
        return Scored("split", (skill,), 0.0, False, "texts do not separate"), None
    per_group = np.bincount(labels, weights=weights.to_numpy(float), minlength=2)
    if per_group.min() < cfg.min_group_weight:
        return Scored("split", (skill,), 0.0, False, f"a text group has {per_group.min():.0f} evidence queries"), None
    agents = sorted(rows["agent"].unique())
    s, f = _group_counts(rows, agents, pd.Series(labels, index=qids))
    log_bf = stats.split_log_bf(s, f)
    total = float(log_bf.sum())
    if total <= cfg.split_threshold and not force:
        return Scored("split", (skill,), total, False, "below threshold"), None
    terms = distinguishing_terms(texts, labels)
    groups = [GroupEvidence(label=f"group {k + 1}", query_ids=[q for q, lab in zip(qids, labels) if lab == k],
                            examples=[t for t, lab in zip(texts, labels) if lab == k][:cfg.max_examples],
                            terms=terms[k]) for k in (0, 1)]
    mode = str(rows["mode"].iat[0])
    record = CandidateRecord(kind="split", detector="bayes", mode=mode, skills=[skill], statistic=round(total, 6),
                             threshold=cfg.split_threshold, groups=groups, agents=_agent_rows(agents, s, f, log_bf))
    return Scored("split", (skill,), total, True), record


def detect_splits(ev: RefinementEvidence, rng: np.random.Generator, cfg: DetectorConfig = DetectorConfig(),
                  only: str | None = None) -> Detection:
    """Every skill with directly attributed evidence; `only` tests one skill and keeps it whatever its statistic
    (a reviewer flagged it)."""
    out = Detection()
    for skill, rows in ev.direct[ev.direct["weight"] > 0].groupby("skill", sort=True):
        if only is not None and skill != only:
            continue
        scored, record = _split_one(ev, str(skill), rows, rng, cfg, force=only is not None)
        out.scored.append(scored)
        if record is not None:
            out.candidates.append(record)
    out.candidates.sort(key=lambda c: -c.statistic)
    return out


def _count_grid(ev: RefinementEvidence, mode: str, keys: list[str]) -> tuple[list[str], np.ndarray, np.ndarray]:
    """(agents, skills x agents S, skills x agents F) for `keys` in `mode`."""
    agents = sorted(ev.agents.loc[ev.agents["mode"] == mode, "agent"].unique())
    c = ev.counts[(ev.counts["mode"] == mode) & ev.counts["skill"].isin(keys)]
    idx = pd.MultiIndex.from_product([keys, agents], names=["skill", "agent"])
    grid = c.set_index(["skill", "agent"])[["S", "F"]].groupby(level=[0, 1]).sum().reindex(idx, fill_value=0.0)
    shape = (len(keys), len(agents))
    return agents, grid["S"].to_numpy(float).reshape(shape), grid["F"].to_numpy(float).reshape(shape)


def _sibling_sets(ev: RefinementEvidence) -> list[tuple[str, list[str]]]:
    """(mode, leaf skills with one parent) for every parent with at least two leaf children."""
    sk = ev.skills.assign(parent=ev.skills["parent"].where(ev.skills["parent"].notna(), ""))
    sk = sk[~sk["skill"].isin(set(sk["parent"]))]
    return [(str(mode), sorted(g["skill"])) for (mode, _), g in sk.groupby(["mode", "parent"], sort=True)
            if len(g) >= 2]


def _examples(ev: RefinementEvidence, skill: str, limit: int) -> GroupEvidence:
    rows = ev.direct[ev.direct["skill"] == skill]
    qids = sorted(set(int(q) for q in rows["query_id"]))
    return GroupEvidence(label=skill, query_ids=qids, examples=[ev.texts[q] for q in qids[:limit] if q in ev.texts])


def detect_merges(ev: RefinementEvidence, cfg: DetectorConfig = DetectorConfig(),
                  only: tuple[str, str] | None = None) -> Detection:
    """Every pair of sibling leaves; `only` tests one pair and keeps it whatever its statistic (flagged)."""
    out = Detection()
    for mode, keys in _sibling_sets(ev):
        if only is not None:
            if not set(only) <= set(keys):
                continue
            keys = sorted(only)
        agents, s, f = _count_grid(ev, mode, keys)
        if not agents:
            continue
        i, j = np.triu_indices(len(keys), k=1)
        log_bf = stats.merge_log_bf(s[i], f[i], s[j], f[j])  # (pairs, agents)
        enough = np.minimum(s[i] + f[i], s[j] + f[j]) >= cfg.min_merge_evidence
        total = np.where(enough, log_bf, 0.0).sum(axis=1)
        worst = np.where(enough, log_bf, np.inf).min(axis=1)
        for p in range(len(i)):
            pair = (keys[i[p]], keys[j[p]])
            if not enough[p].all():
                out.scored.append(Scored("merge", pair, 0.0, False, "not enough evidence on both skills"))
                continue
            ok = (total[p] > cfg.merge_threshold and worst[p] > -cfg.merge_threshold) or only is not None
            out.scored.append(Scored("merge", pair, float(total[p]), bool(ok),
                                     "" if ok else "an agent tells them apart" if total[p] > cfg.merge_threshold
                                     else "below threshold"))
            if ok:
                out.candidates.append(CandidateRecord(
                    kind="merge", detector="bayes", mode=mode, skills=list(pair), statistic=round(float(total[p]), 6),
                    threshold=cfg.merge_threshold,
                    groups=[_examples(ev, k, cfg.max_examples) for k in pair],
                    agents=_agent_rows(agents, np.c_[s[i[p]], s[j[p]]], np.c_[f[i[p]], f[j[p]]], log_bf[p])))
    out.candidates.sort(key=lambda c: -c.statistic)
    return out
