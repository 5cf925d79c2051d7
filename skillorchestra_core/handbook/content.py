"""What a handbook version holds, as plain typed records, with validation and a content hash."""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass
class ModeSpec:
    name: str
    description: str = ""
    insights: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class SkillSpec:
    key: str
    mode: str
    name: str = ""
    description: str = ""
    indicators: list[str] = field(default_factory=list)
    examples: list[str] = field(default_factory=list)
    parent_key: str | None = None
    provenance: dict[str, Any] = field(default_factory=dict)

    @property
    def depth(self) -> int:
        return self.key.count(".")


@dataclass
class AgentSpec:
    name: str
    mode: str
    model: str = ""
    input_price_per_m: float | None = None
    output_price_per_m: float | None = None
    price_source: str = "unknown"
    tools: list[str] = field(default_factory=list)
    profile: dict[str, Any] = field(default_factory=dict)


@dataclass
class ImportedCounts:
    agent: str
    mode: str
    skill_key: str
    alpha: float
    beta: float


# (query_id, mode, skill_key) -> (weight, attributed_by)
AttributionMap = dict[tuple[int, str, str], tuple[float, str]]

SPLITS = ("train", "val", "test")
DEFAULT_LEARN_SPLITS = ("train",)


@dataclass
class HandbookContent:
    """Everything a version curates. Evidence is not here: a version lists the evidence batches it sees, and
    learns (competence, costs, examples, activation, insights) only from the queries of its `learn_splits`."""

    modes: dict[str, ModeSpec] = field(default_factory=dict)
    skills: dict[str, SkillSpec] = field(default_factory=dict)
    agents: dict[tuple[str, str], AgentSpec] = field(default_factory=dict)
    imported: dict[tuple[str, str, str], ImportedCounts] = field(default_factory=dict)
    attributions: AttributionMap = field(default_factory=dict)
    evidence_batches: list[int] = field(default_factory=list)  # stored batch ids
    learn_splits: tuple[str, ...] = DEFAULT_LEARN_SPLITS
    metadata: dict[str, Any] = field(default_factory=dict)

    def add_mode(self, name: str, description: str = "") -> ModeSpec:
        if name not in self.modes:
            self.modes[name] = ModeSpec(name=name, description=description)
        return self.modes[name]

    def skills_in_mode(self, mode: str) -> list[SkillSpec]:
        return sorted((s for s in self.skills.values() if s.mode == mode), key=lambda s: s.key)

    def agents_in_mode(self, mode: str) -> list[AgentSpec]:
        return sorted((a for a in self.agents.values() if a.mode == mode), key=lambda a: a.name)

    def content_hash(self, query_keys: dict[int, str] | None = None,
                     batch_digests: dict[int, str] | None = None) -> str:
        """Digest of the curated content and the evidence it sees. With `query_keys` (stored id -> external id) and
        `batch_digests` (batch id -> content digest) it does not depend on database ids, so equal handbooks hash
        equal anywhere."""
        qk, bd = query_keys or {}, batch_digests or {}
        payload = {
            "modes": [asdict(m) for _, m in sorted(self.modes.items())],
            "skills": [asdict(s) for _, s in sorted(self.skills.items())],
            "agents": [asdict(a) for _, a in sorted(self.agents.items())],
            "imported": [asdict(c) for _, c in sorted(self.imported.items())],
            "attributions": sorted((str(qk.get(q, q)), m, k, round(w, 9), by)
                                   for (q, m, k), (w, by) in self.attributions.items()),
            "evidence": sorted(bd.get(b, str(b)) for b in self.evidence_batches),
            "learn_splits": sorted(self.learn_splits),
        }
        blob = json.dumps(payload, sort_keys=True, separators=(",", ":"), default=str)
        return hashlib.sha256(blob.encode()).hexdigest()


def validate_content(content: HandbookContent) -> list[str]:
    """Problems that would make a version inconsistent; empty when it is sound."""
    problems: list[str] = []
    for key, skill in sorted(content.skills.items()):
        if skill.mode not in content.modes:
            problems.append(f"skill {key!r} is in unknown mode {skill.mode!r}")
    problems.extend(tree_problems(content))
    bad_splits = sorted(set(content.learn_splits) - set(SPLITS))
    if bad_splits or not content.learn_splits:
        problems.append(f"learn splits must be some of {', '.join(SPLITS)}, got {list(content.learn_splits)}")
    for (name, mode) in sorted(content.agents):
        if mode not in content.modes:
            problems.append(f"agent {name!r} is in unknown mode {mode!r}")
    for (agent, mode, key) in sorted(content.imported):
        if key not in content.skills:
            problems.append(f"imported counts for agent {agent!r} name unknown skill {key!r}")
        if (agent, mode) not in content.agents:
            problems.append(f"imported counts name unknown agent {agent!r} in mode {mode!r}")
    totals: dict[tuple[int, str], float] = {}
    for (query_id, mode, key), (weight, _) in content.attributions.items():
        if key not in content.skills:
            problems.append(f"attribution of query {query_id} names unknown skill {key!r}")
            break
        if weight < 0:
            problems.append(f"attribution of query {query_id} to {key!r} has negative weight {weight}")
        totals[(query_id, mode)] = totals.get((query_id, mode), 0.0) + weight
    bad = [qm for qm, total in totals.items() if abs(total - 1.0) > 1e-6]
    if bad:
        problems.append(f"{len(bad)} (query, mode) attribution(s) do not sum to 1, e.g. query {bad[0][0]}")
    return problems


def tree_problems(content: HandbookContent) -> list[str]:
    """Problems of the skill tree alone: unknown or cross-mode parents and parent cycles."""
    problems = []
    for key, skill in sorted(content.skills.items()):
        if skill.parent_key and skill.parent_key not in content.skills:
            problems.append(f"skill {key!r} has unknown parent {skill.parent_key!r}")
        elif skill.parent_key and content.skills[skill.parent_key].mode != skill.mode:
            problems.append(f"skill {key!r} has parent {skill.parent_key!r} in another mode")
    return problems + _cycles(content)


def _cycles(content: HandbookContent) -> list[str]:
    """One problem per parent cycle (a skill that is its own ancestor), naming the loop."""
    parent = {k: s.parent_key for k, s in content.skills.items()}
    done: set[str] = set()
    out = []
    for start in sorted(parent):
        path: list[str] = []
        node: str | None = start
        while node is not None and node in parent and node not in done:
            if node in path:
                loop = path[path.index(node):] + [node]
                out.append("skill parents form a cycle: " + " -> ".join(loop))
                break
            path.append(node)
            node = parent[node]
        done.update(path)
    return out
