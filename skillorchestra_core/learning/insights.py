"""Per-mode routing insights distilled from the attributed train evidence: templated from the numbers offline, or
written by an LLM from the same numbers (falling back to the templates, with the reason noted).

Learned insights carry `learned: true` and replace the previous run's learned insights; hand-written ones stay.
"""

from __future__ import annotations

import hashlib

import pandas as pd
from pydantic import BaseModel, Field

from skillorchestra_core.llm import LlmClient, ask_structured

PURPOSE = "learning.insights"
NEAR = 0.02  # "within 2 points of the best"
MAX_SKILLS_LISTED = 6


class InsightDraft(BaseModel):
    content: str = Field(min_length=1)
    insight_type: str = "usage"
    confidence: float = Field(default=0.5, ge=0, le=1)


class InsightsReply(BaseModel):
    insights: list[InsightDraft] = Field(min_length=1)


def _insight(mode: str, content: str, kind: str, confidence: float, source: str, skills: list[str]) -> dict:
    iid = hashlib.sha1(f"{mode}:{content}".encode()).hexdigest()[:8]
    return {"insight_id": iid, "content": content, "insight_type": kind, "evidence_query_ids": [],
            "confidence": round(confidence, 3), "source": source, "skills": skills, "learned": True}


def _listed(keys: list[str]) -> str:
    shown = ", ".join(keys[:MAX_SKILLS_LISTED])
    return shown + (f" and {len(keys) - MAX_SKILLS_LISTED} more" if len(keys) > MAX_SKILLS_LISTED else "")


def templated(mode: str, comp: pd.DataFrame, costs: pd.DataFrame, leaves: list[str]) -> list[dict]:
    """Insights from one mode's competence rows (agent, mode, skill, mean, n) and costs (agent, mode, cost)."""
    src = "offline:templated"
    c = comp[(comp["mode"] == mode) & comp["skill"].isin(leaves) & (comp["n"] > 0)]
    m = costs[costs["mode"] == mode]
    cost = dict(zip(m["agent"], m["cost"].astype(float)))
    out: list[dict] = []
    if c.empty:
        return out
    overall = c.assign(w=c["mean"] * c["n"]).groupby("agent")[["w", "n"]].sum()
    top = str((overall["w"] / overall["n"]).idxmax())
    out.append(_insight(mode, f"Best agent across the learned skills of {mode}: {top}.", "usage", 0.6, src, []))
    cheap_groups: dict[tuple[str, str], list[str]] = {}
    prefer: dict[str, list[str]] = {}
    for skill, g in c.groupby("skill", sort=True):
        best = g.loc[g["mean"].idxmax()]
        near = g[g["mean"] >= best["mean"] - NEAR].assign(cost=lambda d: d["agent"].map(cost).fillna(float("inf")))
        cheapest = near.sort_values(["cost", "agent"], kind="stable").iloc[0]
        if cheapest["agent"] != best["agent"] and cheapest["cost"] < cost.get(best["agent"], float("inf")):
            cheap_groups.setdefault((str(cheapest["agent"]), str(best["agent"])), []).append(str(skill))
        if best["agent"] != top and best["mean"] - g.loc[g["agent"] == top, "mean"].max() > NEAR:
            prefer.setdefault(str(best["agent"]), []).append(str(skill))
    for (cheap, best), skills in sorted(cheap_groups.items(), key=lambda kv: -len(kv[1])):
        ratio = cost.get(best, 0.0) / cost[cheap] if cost.get(cheap) else float("nan")
        out.append(_insight(mode, f"{cheap} is the cheapest agent within 2 points of the best ({best}) on skills "
                                  f"{_listed(skills)}; it costs {ratio:.1f}x less per call.", "usage", 0.6, src,
                            skills))
    for agent, skills in sorted(prefer.items(), key=lambda kv: -len(kv[1])):
        out.append(_insight(mode, f"Prefer {agent} over {top} on skills {_listed(skills)} (more than 2 points "
                                  "better there).", "usage", 0.55, src, skills))
    return out


def numbers_table(mode: str, comp: pd.DataFrame, costs: pd.DataFrame, leaves: list[str]) -> str:
    c = comp[(comp["mode"] == mode) & comp["skill"].isin(leaves)]
    lines = [f"{r.skill} | {r.agent} | mean {r.mean:.3f} | n {r.n:.1f}" for r in c.itertuples()]
    lines += [f"cost per call | {r.agent} | {r.cost:.6g} USD" for r in costs[costs["mode"] == mode].itertuples()]
    return "\n".join(lines)


def llm_insights(client: LlmClient, mode: str, comp, costs, leaves) -> tuple[list[dict], str]:
    """(insights, "") or (templated insights, why the LLM's were not used)."""
    msgs = [{"role": "system", "content": (
                "Distil routing insights for one mode of an agent router from the per-skill posterior means and "
                "costs below: when to prefer which agent, where a cheaper agent is as good. At most 6. Reply with "
                'JSON only: {"insights": [{"content": "...", "insight_type": "usage|constraint|transition", '
                '"confidence": 0.0-1.0}]}')},
            {"role": "user", "content": f"Mode: {mode}\nskill | agent | posterior mean | evidence\n"
                                        + numbers_table(mode, comp, costs, leaves)}]
    got = ask_structured(client, msgs, InsightsReply, purpose=PURPOSE)
    if got.value is None:
        return templated(mode, comp, costs, leaves), f"{mode}: LLM insights failed ({got.error}); used templates"
    return [_insight(mode, i.content, i.insight_type, i.confidence, f"llm:{got.model}", [])
            for i in got.value.insights[:6]], ""


def merge_insights(old: list[dict], new: list[dict]) -> list[dict]:
    return [i for i in old if not i.get("learned")] + new
