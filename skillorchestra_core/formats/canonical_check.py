"""Consistency checks of a canonical handbook document; the reference's `validate()` only warns, we refuse."""

from __future__ import annotations

from typing import TYPE_CHECKING

from skillorchestra_core.formats import bounds
from skillorchestra_core.formats.rows import as_mode

if TYPE_CHECKING:
    from skillorchestra_core.formats.canonical import CHandbook


def check_canonical(hb: CHandbook) -> list[str]:
    return [*_modes(hb), *_skills(hb), *_index(hb), *_agents(hb), *_studio(hb)]


def _modes(hb: CHandbook) -> list[str]:
    out = []
    for key, mode in hb.modes.items():
        if mode.mode != key:
            out.append(f"modes[{key!r}] says mode {mode.mode!r}")
        try:
            as_mode(key)
        except ValueError as exc:
            out.append(str(exc))
    return out


def _skills(hb: CHandbook) -> list[str]:
    out = []
    for key, skill in hb.skills.items():
        if skill.skill_id != key:
            out.append(f"skills[{key!r}] has skill_id {skill.skill_id!r}")
        if skill.mode not in hb.modes:
            out.append(f"skill {key!r} is in mode {skill.mode!r}, which is not in modes")
        parent = skill.parent_skill_id
        if parent is not None and parent not in hb.skills:
            out.append(f"skill {key!r} has parent {parent!r}, which is not a skill")
        elif parent is not None and hb.skills[parent].mode != skill.mode:
            out.append(f"skill {key!r} (mode {skill.mode!r}) has parent {parent!r} in mode "
                       f"{hb.skills[parent].mode!r}")
    out.extend(_cycles(hb))
    return out


def _cycles(hb: CHandbook) -> list[str]:
    out = []
    for key in hb.skills:
        node: str | None = key
        seen: list[str] = []
        while node is not None and node in hb.skills and node not in seen:
            seen.append(node)
            node = hb.skills[node].parent_skill_id
        if node == key:
            out.append(f"skill {key!r} is its own ancestor ({' -> '.join(seen + [key])})")
    return out


def _index(hb: CHandbook) -> list[str]:
    if hb.mode_skill_index is None:
        return []  # derived from the skills' modes
    out: list[str] = []
    listed: dict[str, str] = {}  # skill key -> the mode that first listed it
    for mode, keys in hb.mode_skill_index.items():
        if mode not in hb.modes:
            out.append(f"mode_skill_index names mode {mode!r}, which is not in modes")
        for key in keys:
            if key in listed:
                out.append(f"mode_skill_index lists skill {key!r} twice (under {listed[key]!r} and {mode!r})")
            listed[key] = mode
            if key not in hb.skills:
                out.append(f"mode_skill_index[{mode!r}] lists {key!r}, which is not a skill")
            elif hb.skills[key].mode != mode:
                out.append(f"mode_skill_index lists {key!r} under {mode!r} but the skill is in mode "
                           f"{hb.skills[key].mode!r}")
    for key in hb.skills:
        if key not in listed:
            out.append(f"skill {key!r} is missing from mode_skill_index")
    return out


def _agents(hb: CHandbook) -> list[str]:
    out, seen = [], set()
    for key, agent in hb.agent_profiles.items():
        if key not in (agent.agent_id, f"{agent.agent_id}@{agent.mode}"):
            out.append(f"agent_profiles[{key!r}] has agent_id {agent.agent_id!r}")
        if (agent.agent_id, agent.mode) in seen:
            out.append(f"agent {agent.agent_id!r} appears twice in mode {agent.mode!r}")
        seen.add((agent.agent_id, agent.mode))
        if agent.mode not in hb.modes:
            out.append(f"agent {key!r} is in mode {agent.mode!r}, which is not in modes")
        for skill in agent.skill_competence:
            if skill not in hb.skills:
                out.append(f"agent {key!r} has competence on {skill!r}, which is not a skill")
            elif hb.skills[skill].mode != agent.mode:
                out.append(f"agent {key!r} (mode {agent.mode!r}) has competence on {skill!r} of mode "
                           f"{hb.skills[skill].mode!r}")
    return out


def _studio(hb: CHandbook) -> list[str]:
    """The Studio block's prices and imported counts: within bounds, or the file is refused (not silently dropped)."""
    studio = hb.metadata.get("studio")
    if studio is None:
        return []
    if not isinstance(studio, dict):
        return ["metadata.studio must be an object"]
    out: list[str] = []
    agents = studio.get("agents") or {}
    if not isinstance(agents, dict):
        out.append("metadata.studio.agents must be an object")
        agents = {}
    for key, entry in agents.items():
        if not isinstance(entry, dict):
            out.append(f"metadata.studio.agents[{key!r}] must be an object")
            continue
        for name in ("input_price_per_m", "output_price_per_m"):
            if entry.get(name) is not None:
                out.extend(_problem(bounds.price, entry[name], f"metadata.studio.agents[{key!r}].{name}"))
    evidence = studio.get("evidence")
    if evidence is not None and not isinstance(evidence, list):
        out.append("metadata.studio.evidence must be a list of batch digests")
    imported = studio.get("imported") or {}
    if not isinstance(imported, dict):
        return [*out, "metadata.studio.imported must be an object"]
    for key, skills in imported.items():
        if not isinstance(skills, dict):
            out.append(f"metadata.studio.imported[{key!r}] must be an object")
            continue
        for skill, ab in skills.items():
            where = f"metadata.studio.imported[{key!r}][{skill!r}]"
            if not isinstance(ab, dict):
                out.append(f"{where} must be an object with alpha and beta")
                continue
            for name in ("alpha", "beta"):
                out.extend(_problem(bounds.beta_count, ab.get(name), f"{where}.{name}"))
    return out


def _problem(check, value, name: str) -> list[str]:
    try:
        check(value, name)
    except ValueError as exc:
        return [str(exc)]
    return []
