"""Stage-router ("StageSkillHandbook") export (reference doc 1.9 b), read by the reference's eval_frames.py.

Skills grouped per stage (= mode); model profiles per agent with the skills of its stage (empirical rate, 0.0 when
unseen, as the reference consumers expect), at most 5 examples and 3 strengths/weaknesses; usage_patterns
guidelines per stage from the mode insights; routing_insights as strings prefixed by insight type.
"""

from __future__ import annotations

from typing import Any

from skillorchestra_core.formats.snapshot import AgentExport, VersionSnapshot, num

MAX_EXAMPLES = 5
MAX_TRAITS = 3
PREFIX = {"transition": "[ToolSelection] ", "usage": "[Usage] ", "constraint": "[Cost] "}


def export_stage_router(snap: VersionSnapshot) -> dict[str, Any]:
    c = snap.loaded.content
    return {
        "version": f"v{snap.loaded.number}",
        "created_at": snap.stamp,
        "updated_at": snap.stamp,
        "skills": {mode: {k.key: _skill(k) for k in c.skills_in_mode(mode)} for mode in sorted(c.modes)},
        "model_profiles": {a.key: _profile(a) for a in snap.agents},
        "usage_patterns": {"guidelines": {m.name: _guidelines(m) for m in sorted(c.modes.values(),
                                                                                key=lambda m: m.name)}},
        "routing_insights": [PREFIX.get(str(i.get("insight_type")), "") + str(i.get("content", ""))
                             for m in sorted(c.modes.values(), key=lambda m: m.name) for i in m.insights],
        "learning_history": [],
    }


def _skill(k) -> dict[str, Any]:
    problems = k.provenance.get("discovered_from_queries") or []
    return {"skill_id": k.key, "name": k.name or k.key, "description": k.description, "stage": k.mode,
            "examples": list(k.examples[:MAX_EXAMPLES]),
            "discovered_from_problems": [{"problem_id": str(p), "problem": "", "answer": ""} for p in problems]}


def _profile(a: AgentExport) -> dict[str, Any]:
    attempts = sum(v.attempts for v in a.skills.values())
    successes = sum(v.successes for v in a.skills.values())
    if a.total_attempts:
        overall = a.total_successes / a.total_attempts
    else:  # no trajectory totals: the skill-level sums, as the reference does for sub-handbooks
        overall = successes / attempts if attempts else 0.0
    return {
        "model_alias": a.spec.name,
        "actual_model": a.spec.model or a.spec.name,
        "stage": a.spec.mode,
        "skill_scores": {k: v.score for k, v in a.skills.items()},
        "skill_attempts": {k: num(v.attempts) for k, v in a.skills.items()},
        "skill_successes": {k: num(v.successes) for k, v in a.skills.items()},
        "overall_success_rate": round(overall, 4),
        "total_attempts": a.total_attempts,
        "total_successes": a.total_successes,
        "avg_prompt_tokens": a.cost_stats["avg_prompt_tokens"],
        "avg_completion_tokens": a.cost_stats["avg_completion_tokens"],
        "avg_cost_usd": a.cost_stats["avg_cost_usd"],
        "strengths": a.list_field("strengths")[:MAX_TRAITS],
        "weaknesses": a.list_field("weaknesses")[:MAX_TRAITS],
    }


def _guidelines(mode) -> dict[str, list[str]]:
    """usage -> use_when (the mode description when there is no usage insight; the reference's operator slip
    that empties use_when is not reproduced), constraint -> skip_when, any other type -> learned_insights."""
    out: dict[str, list[str]] = {"use_when": [], "skip_when": [], "learned_insights": []}
    for ins in mode.insights:
        kind = ins.get("insight_type")
        target = "use_when" if kind == "usage" else "skip_when" if kind == "constraint" else "learned_insights"
        out[target].append(str(ins.get("content", "")))
    if not out["use_when"] and mode.description:
        out["use_when"].append(mode.description)
    return out
