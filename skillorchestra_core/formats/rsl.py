"""RSL ("AR") export (reference doc 1.9 a), the format the reference's model-routing router and failure refiner read.

skill_catalog.categories is keyed by the first segment of the skill id (the mode name, or "general", when the id
has no dot); model_profiles carry every handbook skill (0.0 when unseen: the reference's empirical-rate convention),
at most 5 strengths, weaknesses and routing rules, and totals = average x number of executions.
"""

from __future__ import annotations

from typing import Any

from skillorchestra_core.formats.snapshot import AgentExport, SkillCounts, VersionSnapshot, num
from skillorchestra_core.handbook.content import SkillSpec

MAX_ITEMS = 5


def category_of(skill: SkillSpec) -> str:
    return skill.key.split(".", 1)[0] if "." in skill.key else (skill.mode or "general")


def export_rsl(snap: VersionSnapshot) -> dict[str, Any]:
    return {
        "version": 0,
        "total_experiences": sum(int(a.cost_stats["total_executions"]) for a in snap.agents),
        "created_at": snap.stamp,
        "updated_at": snap.stamp,
        "skill_catalog": {"categories": _categories(snap), "version": 1, "created_at": snap.stamp,
                          "updated_at": snap.stamp},
        "model_profiles": {a.key: _model_profile(a, snap) for a in snap.agents},
        "routing_insights": _insights(snap),
    }


def _categories(snap: VersionSnapshot) -> dict[str, Any]:
    grouped: dict[str, list[SkillSpec]] = {}
    for skill in sorted(snap.loaded.content.skills.values(), key=lambda k: k.key):
        grouped.setdefault(category_of(skill), []).append(skill)
    return {
        cat: {
            "name": cat,
            "description": skills[0].description if len(skills) == 1 else f"Skills related to {cat}",
            "skills": [{"id": k.key, "name": k.name or k.key, "description": k.description, "category": cat,
                        "indicators": list(k.indicators), "examples": list(k.examples[:MAX_ITEMS])}
                       for k in skills],
        }
        for cat, skills in grouped.items()
    }


def _model_profile(a: AgentExport, snap: VersionSnapshot) -> dict[str, Any]:
    # Every handbook skill appears; skills outside the agent's mode count as unseen.
    counts = {k: a.skills.get(k, SkillCounts(0.0, 0.0)) for k in sorted(snap.loaded.content.skills)}
    cost, n = a.cost_stats, int(a.cost_stats["total_executions"])
    return {
        "model_name": a.spec.model or a.spec.name,
        "skill_scores": {k: v.score for k, v in counts.items()},
        "skill_attempts": {k: num(v.attempts) for k, v in counts.items()},
        "skill_successes": {k: num(v.successes) for k, v in counts.items()},
        "strengths": a.list_field("strengths")[:MAX_ITEMS],
        "weaknesses": a.list_field("weaknesses")[:MAX_ITEMS],
        "routing_rules": a.list_field("routing_signals")[:MAX_ITEMS],
        "total_attempts": a.total_attempts,
        "total_successes": a.total_successes,
        "total_executions": n,
        "total_completion_tokens": cost["avg_completion_tokens"] * n,
        "total_prompt_tokens": cost["avg_prompt_tokens"] * n,
        "total_cost_usd": cost["avg_cost_usd"] * n,
        "total_completion_cost_usd": cost["avg_completion_cost_usd"] * n,
        "updated_at": snap.stamp,
        "recent_success_summaries": [],
        "recent_failure_summaries": [],
    }


def _insights(snap: VersionSnapshot) -> list[dict[str, Any]]:
    """Mode insights first, then each agent routing signal (confidence 0.5), numbered ins_1, ins_2, ..."""
    items: list[tuple[str, list[str], float]] = []
    for mode in sorted(snap.loaded.content.modes.values(), key=lambda m: m.name):
        for ins in mode.insights:
            items.append((str(ins.get("content", "")), [], float(ins.get("confidence", 0.5))))
    for a in snap.agents:
        items.extend((signal, [a.key], 0.5) for signal in a.list_field("routing_signals"))
    return [{"insight_id": f"ins_{i}", "content": content, "applies_to_skills": [], "applies_to_models": models,
             "confidence": confidence, "supporting_evidence": 1}
            for i, (content, models, confidence) in enumerate(items, start=1)]
