"""One version gathered for the exporters: content, competence counts per (agent, skill), totals and cost stats.

The reference formats store Beta(1 + successes, 1 + failures) per (agent, skill). Here successes and failures are
the version's evidence counts S and F (weighted by attribution, parents summing their subtree) plus the excess
over Beta(1, 1) of imported counts, so exporting then importing gives back the same counts.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from sqlmodel import Session

from skillorchestra_core.db.models import HandbookVersion
from skillorchestra_core.errors import NotFound
from skillorchestra_core.evidence.batches import batch_digests
from skillorchestra_core.handbook.content import AgentSpec
from skillorchestra_core.handbook.store import LoadedVersion, load_version
from skillorchestra_core.learning import profile
from skillorchestra_core.learning.competence import PriorConfig, pooled_rates

COST_KEYS = ("avg_prompt_tokens", "avg_completion_tokens", "avg_latency_s", "avg_cost_usd",
             "avg_completion_cost_usd", "avg_prompt_cost_usd")


def num(x: float) -> int | float:
    """Integral counts print as ints (as the reference writes them), others at full precision, so that an export
    read back gives exactly the same posteriors."""
    x = float(x)
    return int(x) if x.is_integer() else x


@dataclass(frozen=True)
class SkillCounts:
    successes: float
    failures: float

    @property
    def attempts(self) -> float:
        return self.successes + self.failures

    @property
    def alpha(self) -> int | float:
        return num(1.0 + self.successes)

    @property
    def beta(self) -> int | float:
        return num(1.0 + self.failures)

    @property
    def score(self) -> float:
        # The reference consumers route on the empirical rate and read an unseen skill as 0.0 (not the posterior
        # mean, not "unknown"); the exports keep that meaning so the reference scripts behave as they expect.
        return round(self.successes / self.attempts, 4) if self.attempts > 1e-12 else 0.0


@dataclass(frozen=True)
class AgentExport:
    spec: AgentSpec
    key: str  # unique in the export: the name, or "name@mode" when the name serves several modes
    skills: dict[str, SkillCounts]
    total_attempts: int | float
    total_successes: int | float
    cost_stats: dict[str, Any] = field(default_factory=dict)

    def list_field(self, name: str) -> list[str]:
        value = self.spec.profile.get(name) or []
        return [str(v) for v in value] if isinstance(value, list) else []


@dataclass(frozen=True)
class VersionSnapshot:
    loaded: LoadedVersion
    row: HandbookVersion
    frames: profile.VersionFrames
    competence: pd.DataFrame
    costs: pd.DataFrame
    agents: list[AgentExport]
    prior: PriorConfig
    evidence_digests: list[str]  # content digests of the evidence batches the version sees

    @property
    def stamp(self) -> str:
        return self.row.created_at.isoformat()


def collect(s: Session, name: str, number: int | None = None, prior: PriorConfig | None = None) -> VersionSnapshot:
    loaded = load_version(s, name, number)
    row = s.get(HandbookVersion, loaded.version_id)
    if row is None:  # deleted since load_version read it
        raise NotFound(f"handbook {name!r} has no version row {loaded.version_id}")
    frames = profile.load_frames(s, loaded)
    prior = prior or profile.default_prior()
    comp = profile.competence(frames, prior=prior)
    costs = profile.costs(frames)
    pooled = pooled_rates(frames.outcomes, frames.agents, frames.imported, frames.skills)
    digests = sorted(batch_digests(s, loaded.content.evidence_batches).values())
    return VersionSnapshot(loaded, row, frames, comp, costs, _agents(loaded, frames, comp, costs, pooled), prior,
                           digests)


def _agents(loaded: LoadedVersion, frames: profile.VersionFrames, comp: pd.DataFrame,
            costs: pd.DataFrame, pooled: pd.DataFrame) -> list[AgentExport]:
    """Per agent: counts per skill, totals = the pooled counts its prior is centred on, and cost stats."""
    c = loaded.content
    totals = {(r.agent, r.mode): (r.s_mode, r.n_mode) for r in pooled.itertuples()}
    names = [a.name for a in c.agents.values()]
    counts = {(r.agent, r.mode, r.skill): SkillCounts(r.S + r.s_imported, r.F + r.f_imported)
              for r in comp.itertuples()}
    cost_of = {(r.agent, r.mode): float(r.cost) for r in costs.itertuples()}
    out = []
    for spec in sorted(c.agents.values(), key=lambda a: (a.mode, a.name)):
        mine = frames.outcomes[(frames.outcomes["agent"] == spec.name) & (frames.outcomes["mode"] == spec.mode)]
        skills = {k.key: counts.get((spec.name, spec.mode, k.key), SkillCounts(0.0, 0.0))
                  for k in c.skills_in_mode(spec.mode)}
        key = spec.name if names.count(spec.name) == 1 else f"{spec.name}@{spec.mode}"
        successes, attempts = totals.get((spec.name, spec.mode), (0.0, 0.0))
        out.append(AgentExport(spec, key, skills, num(attempts), num(successes),
                               cost_stats(spec, mine, cost_of.get((spec.name, spec.mode), 0.0))))
    return out


def cost_stats(spec: AgentSpec, mine: pd.DataFrame, avg_cost: float) -> dict[str, Any]:
    """The reference CostStats of one agent: evidence means where there is evidence, else the imported stats;
    avg_cost_usd is always C(A, mode)."""
    given = spec.profile.get("cost_stats")
    imported = given if isinstance(given, dict) else {}
    if mine.empty:
        stats = {k: float(imported.get(k) or 0.0) for k in COST_KEYS}
        stats["total_executions"] = int(imported.get("total_executions") or 0)
    else:
        pin = np.nan if spec.input_price_per_m is None else spec.input_price_per_m
        pout = np.nan if spec.output_price_per_m is None else spec.output_price_per_m
        stats = {
            "avg_prompt_tokens": _mean(mine["prompt_tokens"]),
            "avg_completion_tokens": _mean(mine["completion_tokens"]),
            "avg_latency_s": _mean(mine["latency_s"]),
            "avg_prompt_cost_usd": _mean(mine["prompt_tokens"] * pin / 1e6),
            "avg_completion_cost_usd": _mean(mine["completion_tokens"] * pout / 1e6),
            "total_executions": int(len(mine)),
        }
        if stats["avg_prompt_cost_usd"] == 0.0 and stats["avg_completion_cost_usd"] == 0.0:
            stats["avg_completion_cost_usd"] = avg_cost  # the reference's convention without a price card
    stats["avg_cost_usd"] = float(avg_cost)
    return {k: stats[k] for k in (*COST_KEYS, "total_executions")}


def _mean(values: pd.Series) -> float:
    value = float(values.astype(float).mean()) if len(values) else math.nan
    return 0.0 if math.isnan(value) else value
