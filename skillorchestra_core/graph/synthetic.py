"""Generated handbooks for scale tests and benchmarks: a skill tree of any size with sampled outcomes.

The data is synthetic (seeded, templated); it exists to check that the explorer stays usable on a 1,000-skill x
20-agent handbook, and to give tests a small handbook when the demo is not wanted.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from sqlmodel import Session, select

from skillorchestra_core.db.models import Query, key
from skillorchestra_core.evidence.ingest import AgentHint, OutcomeRow, ingest_outcomes
from skillorchestra_core.handbook.content import SkillSpec
from skillorchestra_core.handbook.store import commit_version, get_handbook, latest_content


@dataclass(frozen=True)
class SyntheticSpec:
    name: str = "synthetic-large"
    n_skills: int = 1000  # categories and leaves together
    n_agents: int = 20
    queries_per_leaf: int = 2
    modes: tuple[str, ...] = ("answer",)
    seed: int = 0


def _tree(mode: str, n_skills: int) -> list[SkillSpec]:
    """A two-level tree: about sqrt(n)/1.5 categories, the rest leaves spread evenly under them."""
    n_cat = max(1, min(n_skills, int(round(np.sqrt(n_skills) / 1.5))))
    n_leaf = n_skills - n_cat
    skills = [SkillSpec(key=f"{mode}.cat{c:02d}", mode=mode, name=f"Category {c:02d}",
                        description=f"Synthetic skill category {c} of mode {mode}.",
                        indicators=[f"topic {c}"], provenance={"source": "synthetic"})
              for c in range(n_cat)]
    for i in range(n_leaf):
        c = i % n_cat
        skills.append(SkillSpec(key=f"{mode}.cat{c:02d}.s{i:04d}", mode=mode, name=f"Skill {i:04d}",
                                description=f"Synthetic leaf skill {i} under category {c}.",
                                indicators=[f"topic {c}", f"marker {i}"], parent_key=f"{mode}.cat{c:02d}",
                                provenance={"source": "synthetic"}))
    return skills


def build_synthetic_handbook(s: Session, spec: SyntheticSpec = SyntheticSpec()) -> int:
    """Create handbook `spec.name` with the generated tree, agents and outcomes; returns the version number."""
    rng = np.random.default_rng(spec.seed)
    agents = [f"agent-{k:02d}" for k in range(spec.n_agents)]
    ability = rng.uniform(0.35, 0.9, size=spec.n_agents)
    prices = rng.uniform(0.1, 15.0, size=spec.n_agents)
    per_mode = max(1, spec.n_skills // len(spec.modes))
    trees = {mode: _tree(mode, per_mode) for mode in spec.modes}
    rows: list[OutcomeRow] = []
    plan: list[tuple[str, str, str]] = []  # (query ext id, mode, leaf key)
    line = 0
    for mode, tree in trees.items():
        leaves = [k for k in tree if k.parent_key] or tree
        for leaf in leaves:
            skew = rng.normal(0.0, 0.12, size=spec.n_agents)
            p = np.clip(ability + skew, 0.02, 0.98)
            for q in range(spec.queries_per_leaf):
                qid = f"{leaf.key}#{q}"
                plan.append((qid, mode, leaf.key))
                outcomes = rng.random(spec.n_agents) < p
                for a, ok in zip(agents, outcomes):
                    line += 1
                    rows.append(OutcomeRow(line=line, query_id=qid, query=f"Synthetic question {q} on {leaf.name}",
                                           agent=a, score=float(ok), mode=mode, prompt_tokens=300,
                                           completion_tokens=150, dataset="synthetic"))
    hints = {a: AgentHint(model=f"synthetic/{a}", input_price_per_m=float(p), output_price_per_m=float(2 * p))
             for a, p in zip(agents, prices)}
    ingest_outcomes(s, spec.name, rows, source_label="synthetic", author="synthetic", agent_hints=hints,
                    description="Generated for scale tests (synthetic).", synthetic=True)
    hb = get_handbook(s, spec.name)
    ids = {ext: i for ext, i in s.exec(select(Query.ext_id, Query.id).where(Query.handbook_id == hb.id))
           if i is not None}
    parent, content = latest_content(s, key(hb))
    for tree in trees.values():
        for skill in tree:
            content.skills[skill.key] = skill
    for qid, mode, leaf_key in plan:
        content.attributions[(ids[qid], mode, leaf_key)] = (1.0, "label")
    version, _ = commit_version(s, hb, content, author="synthetic", message="synthetic skill tree",
                                source="synthetic", parent=parent)
    return version.number
