"""What the node panel shows for a mode, a skill or an agent of a version (read models, no rendering)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from skillorchestra_core.graph.build import skill_parents, split_id
from skillorchestra_core.graph.service import VersionData, queries_per_skill

RANK_COLUMNS = ["rank", "agent", "mean", "ci_low", "ci_high", "n", "empirical_rate", "n_imported", "basis"]


@dataclass(frozen=True)
class SkillPanel:
    key: str
    name: str
    mode: str
    description: str
    indicators: list[str]
    examples: list[str]
    provenance: dict[str, Any]
    parent: str | None
    children: list[str]
    n_queries: int
    agents: pd.DataFrame  # RANK_COLUMNS, best first


@dataclass(frozen=True)
class AgentPanel:
    name: str
    models: list[str]
    price_card: pd.DataFrame  # mode, model, input_price_per_m, output_price_per_m, price_source
    costs: pd.DataFrame  # mode, cost per call (USD), calls, source
    skills: pd.DataFrame  # rank, mode, skill, name, mean, ci_low, ci_high, n, empirical_rate, basis
    tools: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class ModePanel:
    name: str
    description: str
    insights: list[Any]
    n_skills: int
    top_skills: list[str]
    agents: list[str]


def rank_agents(comp: pd.DataFrame, skill: str) -> pd.DataFrame:
    """Agents on one skill, best posterior mean first (ties: more evidence, then name)."""
    rows = comp[comp["skill"] == skill].sort_values(["mean", "n", "agent"], ascending=[False, False, True],
                                                     kind="stable")
    rows = rows.assign(rank=range(1, len(rows) + 1))
    return rows[RANK_COLUMNS].reset_index(drop=True)


def skill_panel(data: VersionData, key: str) -> SkillPanel:
    c = data.loaded.content
    spec = c.skills[key]
    parents = skill_parents(c.skills)
    children = sorted(k for k, p in parents.items() if p == key)
    return SkillPanel(key, spec.name or key, spec.mode, spec.description, list(spec.indicators),
                      list(spec.examples), dict(spec.provenance), parents.get(key), children,
                      int(queries_per_skill(data.frames).get(key, 0)), rank_agents(data.competence, key))


def agent_panel(data: VersionData, name: str) -> AgentPanel:
    c = data.loaded.content
    specs = [a for (n, _m), a in sorted(c.agents.items()) if n == name]
    card = pd.DataFrame([{"mode": a.mode, "model": a.model, "input_price_per_m": a.input_price_per_m,
                          "output_price_per_m": a.output_price_per_m, "price_source": a.price_source}
                         for a in specs], columns=["mode", "model", "input_price_per_m", "output_price_per_m",
                                                   "price_source"])
    costs = data.costs[data.costs["agent"] == name].rename(
        columns={"cost": "cost per call (USD)", "n_cost": "calls", "cost_source": "source"})
    costs = costs[["mode", "cost per call (USD)", "calls", "source"]].reset_index(drop=True)
    names = {k: (s.name or k) for k, s in c.skills.items()}
    skills = data.competence[data.competence["agent"] == name].sort_values(
        ["mean", "n", "skill"], ascending=[False, False, True], kind="stable")
    skills = skills.assign(rank=range(1, len(skills) + 1), name=skills["skill"].map(names))
    skills = skills[["rank", "mode", "skill", "name", "mean", "ci_low", "ci_high", "n", "empirical_rate",
                     "basis"]].reset_index(drop=True)
    tools = sorted({t for a in specs for t in a.tools})
    return AgentPanel(name, sorted({a.model for a in specs if a.model}), card, costs, skills, tools)


def mode_panel(data: VersionData, name: str) -> ModePanel:
    c = data.loaded.content
    spec = c.modes[name]
    skills = c.skills_in_mode(name)
    per = queries_per_skill(data.frames)
    top = sorted((s.key for s in skills), key=lambda k: (-per.get(k, 0), k))[:10]
    return ModePanel(name, spec.description, list(spec.insights), len(skills), top,
                     [a.name for a in c.agents_in_mode(name)])


def node_panel(data: VersionData, node: str | None) -> SkillPanel | AgentPanel | ModePanel | None:
    """The panel for a node id (mode:…, skill:…, agent:…), or None when the version has no such node."""
    if not node:
        return None
    kind, ident = split_id(node)
    c = data.loaded.content
    if kind == "skill" and ident in c.skills:
        return skill_panel(data, ident)
    if kind == "agent" and any(n == ident for n, _m in c.agents):
        return agent_panel(data, ident)
    if kind == "mode" and ident in c.modes:
        return mode_panel(data, ident)
    return None


def ranking_lines(ranked: pd.DataFrame, name_column: str = "agent") -> list[tuple[str, str]]:
    """(name, figures) per row of a ranking, e.g. ("qwen", "0.820 [0.700, 0.910] · n 34.0 · empirical 0.850"):
    plain text that wraps in a narrow panel instead of hiding columns off to the right."""
    out = []
    for r in ranked.itertuples(index=False):
        emp = getattr(r, "empirical_rate")
        emp_text = "unseen" if pd.isna(emp) else f"{emp:.3f}"
        extra = f" · imported n {r.n_imported:.1f}" if getattr(r, "n_imported", 0) else ""
        out.append((str(getattr(r, name_column)), f"{r.mean:.3f} [{r.ci_low:.3f}, {r.ci_high:.3f}] · n {r.n:.1f}"
                                                  f" · empirical {emp_text}{extra}"))
    return out


COMPACT_SKILL_COLUMNS = ["skill", "mean", "ci_low", "ci_high", "n"]


def price_lines(card: pd.DataFrame, costs: pd.DataFrame) -> list[str]:
    """One plain line per mode: model, price card and mean cost per call (wraps in a narrow panel)."""
    per_call = {r["mode"]: r for _, r in costs.iterrows()}
    out = []
    for _, r in card.iterrows():
        price = ("no price card" if pd.isna(r["input_price_per_m"]) else
                 f"in {r['input_price_per_m']:g} / out {r['output_price_per_m']:g} per 1M tokens"
                 + (f" ({r['price_source']})" if r.get("price_source") else ""))
        line = f"{r['mode']}: {r['model'] or 'no model string'}, {price}"
        c = per_call.get(r["mode"])
        if c is not None and not pd.isna(c["cost per call (USD)"]):
            line += f"; {c['cost per call (USD)']:.6f} per call ({int(c['calls'])} calls, {c['source']})"
        out.append(line)
    return out
