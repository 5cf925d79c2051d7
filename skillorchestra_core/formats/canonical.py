"""SkillOrchestra canonical handbook JSON (reference doc 1.8): import into a handbook version, export from one.

Import: modes (with insights), skills (provenance, parent), agent profiles (model_name -> model, tools; cost_stats,
strengths, weaknesses, routing_signals and total_attempts/successes kept in the agent's profile dict) and
skill_competence alpha/beta as imported counts (kept apart from evidence; Beta(1, 1) entries carry nothing and are
dropped). Where the reference only warns (skill in a missing mode, dangling parent, inconsistent mode_skill_index,
agent in a missing mode, competence on an unknown skill) this refuses the file with every problem listed.

Export: alpha = 1 + successes, beta = 1 + failures (evidence S/F plus imported excess, the reference's Beta(1, 1)
convention), the derived skill_scores/skill_attempts/skill_successes maps, and cost_stats.avg_cost_usd = C(A, mode).
Prices, which the reference format has no place for, ride in metadata.studio.agents so a round trip keeps them.
Numbers must lie within the limits of `bounds` (alpha/beta, totals, cost_stats, prices), or the file is refused.
An agent name used in two modes is keyed "name@mode" (agent_id stays the name), as the reference keys by id alone.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from sqlmodel import Session

from skillorchestra_core.db.engine import lock_for_write
from skillorchestra_core.errors import StudioError
from skillorchestra_core.evidence.batches import handbook_digests
from skillorchestra_core.evidence.costs import default_price_card
from skillorchestra_core.formats import bounds
from skillorchestra_core.formats.canonical_check import check_canonical
from skillorchestra_core.formats.rows import MalformedFile, load_json_document
from skillorchestra_core.formats.snapshot import AgentExport, VersionSnapshot, num
from skillorchestra_core.handbook.content import AgentSpec, HandbookContent, ImportedCounts, ModeSpec, SkillSpec
from skillorchestra_core.handbook.store import commit_version, get_or_create_handbook, latest_content

PROVENANCE_DEFAULTS: dict[str, Any] = {"discovered_from_queries": [], "positive_trajectories": [],
                                       "negative_trajectories": [], "discovery_round": 0, "refinement_history": []}
PROFILE_KEYS = ("cost_stats", "strengths", "weaknesses", "routing_signals", "total_attempts", "total_successes")
EVIDENCE_PROFILE_KEYS = ("cost_stats", "total_attempts", "total_successes")  # derived from evidence on export


class _Model(BaseModel):
    model_config = ConfigDict(extra="ignore", allow_inf_nan=False)


class CInsight(BaseModel):
    model_config = ConfigDict(extra="allow", allow_inf_nan=False)
    insight_id: str = ""
    content: str
    insight_type: str = "usage"
    evidence_query_ids: list[str] = Field(default_factory=list)
    confidence: float = Field(0.5, ge=0.0, le=1.0)


class CMode(_Model):
    mode: str
    description: str = ""
    insights: list[CInsight] = Field(default_factory=list)


class CSkill(_Model):
    skill_id: str
    mode: str
    name: str = ""
    description: str = ""
    indicators: list[str] = Field(default_factory=list)
    examples: list[str] = Field(default_factory=list)
    parent_skill_id: str | None = None
    provenance: dict[str, Any] = Field(default_factory=dict)


class CBeta(_Model):
    alpha: float = Field(1.0, gt=0, le=bounds.MAX_BETA_COUNT)
    beta: float = Field(1.0, gt=0, le=bounds.MAX_BETA_COUNT)


class CAgent(_Model):
    agent_id: str
    mode: str
    model_name: str = ""
    tools: list[str] = Field(default_factory=list)
    skill_competence: dict[str, CBeta] = Field(default_factory=dict)
    total_attempts: float = Field(0, ge=0, le=bounds.MAX_BETA_COUNT)
    total_successes: float = Field(0, ge=0, le=bounds.MAX_BETA_COUNT)
    cost_stats: dict[str, float] = Field(default_factory=dict)
    routing_signals: list[str] = Field(default_factory=list)
    strengths: list[str] = Field(default_factory=list)
    weaknesses: list[str] = Field(default_factory=list)

    @field_validator("cost_stats")
    @classmethod
    def _bounded_costs(cls, value: dict[str, float]) -> dict[str, float]:
        # A negative or huge average cost would make this agent win, or lose, every routing decision.
        return {k: bounds.cost_stat(k, v) for k, v in value.items()}


class CHandbook(_Model):
    metadata: dict[str, Any] = Field(default_factory=dict)
    modes: dict[str, CMode] = Field(default_factory=dict)
    skills: dict[str, CSkill] = Field(default_factory=dict)
    agent_profiles: dict[str, CAgent] = Field(default_factory=dict)
    mode_skill_index: dict[str, list[str]] | None = None


@dataclass(frozen=True)
class HandbookImportResult:
    path: str
    handbook: str
    version: int
    created_version: bool
    modes: int
    skills: int
    agents: int
    imported_counts: int
    dropped_attributions: int = 0
    evidence_held: bool = False  # the file's counts came from evidence this handbook already holds

    def lines(self) -> list[str]:
        status = (f"created version {self.version}" if self.created_version
                  else f"unchanged (still version {self.version})")
        out = [f"imported handbook {self.path} into {self.handbook!r}: {self.modes} mode(s), {self.skills} "
               f"skill(s), {self.agents} agent(s), {self.imported_counts} imported count(s); {status}"]
        if self.evidence_held:
            out.append("the file's competence counts come from evidence this handbook already holds: "
                       "they were not added again")
        if self.dropped_attributions:
            out.append(f"dropped {self.dropped_attributions} attribution(s) to skills the file does not have")
        return out


# --- import --------------------------------------------------------------------------------------------------------

def parse_canonical(doc: Any, path: str) -> HandbookContent:
    """Validate a canonical handbook document into content (modes, skills, agents, imported counts)."""
    if not isinstance(doc, dict):
        raise MalformedFile(f"{path}: expected a JSON object (a SkillOrchestra handbook)")
    try:
        hb = CHandbook.model_validate(doc)
    except ValidationError as exc:
        shown = "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()[:20])
        raise MalformedFile(f"{path}: not a SkillOrchestra handbook: {shown}") from None
    problems = check_canonical(hb)
    if problems:
        more = f" (and {len(problems) - 20} more)" if len(problems) > 20 else ""
        raise MalformedFile(f"{path}: inconsistent handbook: {'; '.join(problems[:20])}{more}")
    return _content(hb)


def _content(hb: CHandbook) -> HandbookContent:
    c = HandbookContent()
    for name, m in hb.modes.items():
        c.modes[name] = ModeSpec(name, m.description, [i.model_dump() for i in m.insights])
    for key, k in hb.skills.items():
        provenance = {p: v for p, v in k.provenance.items() if PROVENANCE_DEFAULTS.get(p, object()) != v}
        c.skills[key] = SkillSpec(key, k.mode, k.name, k.description, list(k.indicators), list(k.examples),
                                  k.parent_skill_id, provenance)
    studio = (hb.metadata.get("studio") or {}).get("agents") or {}
    skill_costs = (hb.metadata.get("studio") or {}).get("skill_costs") or {}
    for key, a in hb.agent_profiles.items():
        c.agents[(a.agent_id, a.mode)] = _agent(a, studio.get(key) if isinstance(studio, dict) else None)
        mine = skill_costs.get(key) if isinstance(skill_costs, dict) else None
        if isinstance(mine, dict) and mine:  # per-skill costs ride in the profile, as the mode cost does
            c.agents[(a.agent_id, a.mode)].profile["skill_costs"] = {
                k: {"calls": float(v["calls"]), "cost_usd": float(v["cost_usd"])} for k, v in sorted(mine.items())
                if isinstance(v, dict) and _price(v.get("calls")) is not None and _price(v.get("cost_usd")) is not None}
        for skill, b in a.skill_competence.items():
            if (b.alpha, b.beta) != (1.0, 1.0):
                c.imported[(a.agent_id, a.mode, skill)] = ImportedCounts(a.agent_id, a.mode, skill, b.alpha, b.beta)
    ref = {k: hb.metadata[k] for k in ("version", "created_at", "updated_at", "learning_stats") if k in hb.metadata}
    c.metadata = {"source_format": "skillorchestra", "reference_metadata": ref}
    return c


def _agent(a: CAgent, studio: Any) -> AgentSpec:
    spec = AgentSpec(a.agent_id, a.mode, a.model_name or a.agent_id, tools=list(a.tools),
                     profile={k: getattr(a, k) for k in PROFILE_KEYS})
    if isinstance(studio, dict) and ("input_price_per_m" in studio or "output_price_per_m" in studio):
        spec.input_price_per_m = _price(studio.get("input_price_per_m"))
        spec.output_price_per_m = _price(studio.get("output_price_per_m"))
        spec.price_source = str(studio.get("price_source") or "import")
    elif (card := default_price_card(spec.model)) is not None:
        spec.input_price_per_m, spec.output_price_per_m = card
        spec.price_source = "litellm"
    return spec


def _price(value: Any) -> float | None:
    # Checked against bounds.price by check_canonical before this runs.
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def import_handbook(s: Session, path: str | Path, handbook: str, *, author: str = "cli") -> HandbookImportResult:
    """Import a canonical handbook file as the next version of `handbook` (created if needed).

    The file's modes, skills, agents and counts replace the version's; the handbook's evidence stays, attributions
    to skills the file still has are kept, and agents known only from evidence stay (with their modes). When the
    file was exported from evidence this handbook already holds (its own export, or a copy of the same evidence),
    its alpha/beta are that evidence and are not added again: only the source version's own imported counts are.
    """
    doc = load_json_document(Path(path))
    parsed = parse_canonical(doc, str(path))
    lock_for_write(s, f"handbook:{handbook}")
    hb = get_or_create_handbook(s, handbook)
    assert hb.id is not None  # get_or_create flushes: a stored handbook has its id
    parent, current = latest_content(s, hb.id)
    studio = (doc.get("metadata") or {}).get("studio") or {}
    held = _held_evidence(s, hb.id, studio, str(path))
    content, dropped = _merge(current, parsed, held, studio, doc.get("agent_profiles") or {})
    version, created = commit_version(s, hb, content, author=author, message=f"import handbook {path}",
                                      source=str(path), parent=parent)
    return HandbookImportResult(str(path), hb.name, version.number, created, len(content.modes),
                                len(content.skills), len(content.agents), len(content.imported), dropped,
                                evidence_held=held is not None)


def _held_evidence(s: Session, handbook_id: int, studio: dict, path: str) -> list[int] | None:
    """Batch ids of the file's source evidence when this handbook holds all of it; None when it holds none."""
    digests = [d for d in studio.get("evidence") or [] if isinstance(d, str)]
    if not digests:
        return None
    have = handbook_digests(s, handbook_id)
    held = [have[d] for d in digests if d in have]
    if not held:
        return None
    if len(held) < len(digests):
        raise StudioError(f"{path}: its counts come from evidence this handbook holds only in part "
                          f"({len(held)} of {len(digests)} batches), so they cannot be separated from it; "
                          "import the file into a new handbook instead")
    return held


def _merge(current: HandbookContent, parsed: HandbookContent, held: list[int] | None, studio: dict,
           profiles: dict) -> tuple[HandbookContent, int]:
    parsed.learn_splits = current.learn_splits
    parsed.evidence_batches = sorted({*current.evidence_batches, *(held or [])})
    if held is not None:  # the file's alpha/beta are this evidence: keep only its source's own imported counts
        parsed.imported = _studio_imported(studio, profiles)
        for key, spec in parsed.agents.items():
            mine = current.agents.get(key)
            spec.profile = dict(mine.profile) if mine else {
                k: v for k, v in spec.profile.items() if k not in EVIDENCE_PROFILE_KEYS}
    for key, spec in current.agents.items():
        if key not in parsed.agents:
            parsed.agents[key] = spec
            parsed.modes.setdefault(spec.mode, current.modes.get(spec.mode) or ModeSpec(spec.mode))
    kept = {k: v for k, v in current.attributions.items() if k[2] in parsed.skills}
    parsed.attributions = kept
    return parsed, len(current.attributions) - len(kept)


def _studio_imported(studio: dict, profiles: dict) -> dict[tuple[str, str, str], ImportedCounts]:
    out = {}
    for key, skills in (studio.get("imported") or {}).items():
        prof = profiles.get(key) or {}
        agent, mode = prof.get("agent_id", key), prof.get("mode", "")
        for skill, ab in (skills or {}).items():
            out[(agent, mode, skill)] = ImportedCounts(agent, mode, skill, float(ab["alpha"]), float(ab["beta"]))
    return out


# --- export --------------------------------------------------------------------------------------------------------

def export_canonical(snap: VersionSnapshot) -> dict[str, Any]:
    c = snap.loaded.content
    ref = c.metadata.get("reference_metadata") or {}
    return {
        "metadata": {
            "version": f"v{snap.loaded.number}", "created_at": snap.stamp, "updated_at": snap.stamp,
            "num_modes": len(c.modes), "num_skills": len(c.skills), "num_agents": len(c.agents),
            "learning_stats": ref.get("learning_stats", {}),
            "studio": _studio_block(snap),
        },
        "modes": {m.name: {"mode": m.name, "description": m.description, "insights": list(m.insights)}
                  for m in sorted(c.modes.values(), key=lambda m: m.name)},
        "skills": {k.key: {"skill_id": k.key, "name": k.name, "description": k.description,
                           "indicators": list(k.indicators), "examples": list(k.examples), "mode": k.mode,
                           "parent_skill_id": k.parent_key, "provenance": {**PROVENANCE_DEFAULTS, **k.provenance}}
                   for k in sorted(c.skills.values(), key=lambda k: k.key)},
        "agent_profiles": {a.key: _profile(a) for a in snap.agents},
        "mode_skill_index": {m: [k.key for k in c.skills_in_mode(m)] for m in sorted(c.modes)},
    }


def _studio_block(snap: VersionSnapshot) -> dict[str, Any]:
    """What the reference format has no place for: prices, the prior the posteriors were computed with (its pooled
    counts are the agents' totals), the evidence the counts came from and the version's own imported counts, so an
    import can reproduce every posterior and never count the same evidence twice."""
    c = snap.loaded.content
    key_of = {(a.spec.name, a.spec.mode): a.key for a in snap.agents}
    imported: dict[str, dict[str, dict[str, float]]] = {}
    for (agent, mode, skill), counts in sorted(c.imported.items()):
        imported.setdefault(key_of.get((agent, mode), agent), {})[skill] = {"alpha": counts.alpha, "beta": counts.beta}
    return {
        "format": 2, "handbook": snap.loaded.handbook_name, "version": snap.loaded.number,
        "content_hash": snap.loaded.content_hash, "learn_splits": list(c.learn_splits),
        "prior": {"kind": snap.prior.kind, "strength": snap.prior.strength,
                  "pooled": {a.key: {"successes": a.total_successes, "attempts": a.total_attempts}
                             for a in snap.agents}},
        "evidence": snap.evidence_digests,
        "imported": imported,
        "skill_costs": _skill_costs(snap, key_of),
        "agents": {a.key: {"input_price_per_m": a.spec.input_price_per_m,
                           "output_price_per_m": a.spec.output_price_per_m,
                           "price_source": a.spec.price_source} for a in snap.agents},
    }


def _skill_costs(snap: VersionSnapshot, key_of: dict) -> dict[str, dict[str, dict[str, float]]]:
    """Per agent and skill, the attribution-weighted calls behind its cost and their mean cost (unshrunk, subtree
    included): an import adds them back as they are, so the file prices every skill as the stored version does."""
    from skillorchestra_core.evidence.skill_costs import imported_skill_costs, skill_costs

    f = snap.frames
    rows = skill_costs(f.outcomes, f.attributions, f.skills, f.agents, snap.costs, shrink=0.0,
                       imported=imported_skill_costs(snap.loaded.content.agents.values()))
    out: dict[str, dict[str, dict[str, float]]] = {}
    for r in rows[rows["n_cost"] > 0].itertuples():
        out.setdefault(key_of.get((r.agent, r.mode), r.agent), {})[r.skill] = {"calls": float(r.n_cost),
                                                                              "cost_usd": float(r.cost)}
    return out


def _profile(a: AgentExport) -> dict[str, Any]:
    return {
        "agent_id": a.spec.name, "mode": a.spec.mode, "model_name": a.spec.model, "tools": list(a.spec.tools),
        "skill_competence": {k: {"alpha": v.alpha, "beta": v.beta} for k, v in a.skills.items()},
        # Derived, read-only in the reference (recomputed from alpha/beta on load): rate rounded to 4 places
        # (0.0 when unseen), attempts and successes.
        "skill_scores": {k: v.score for k, v in a.skills.items()},
        "skill_attempts": {k: num(v.attempts) for k, v in a.skills.items()},
        "skill_successes": {k: num(v.successes) for k, v in a.skills.items()},
        "total_attempts": a.total_attempts, "total_successes": a.total_successes,
        "cost_stats": a.cost_stats,
        "routing_signals": a.list_field("routing_signals"), "strengths": a.list_field("strengths"),
        "weaknesses": a.list_field("weaknesses"),
    }
