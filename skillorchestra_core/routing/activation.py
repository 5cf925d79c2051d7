"""Skill activation: which skills a query needs in a mode, with weights and where they came from.

Offline (the default): a TF-IDF retriever over each leaf skill's profile (key, name, description, indicators,
examples) blended with a nearest-neighbour vote of the labelled train queries (their attributions). With an LLM
configured: the orchestrator prompt asks for `required_skills` as JSON (validated, re-asked once), falling back to
the retriever with the reason recorded.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from pydantic import BaseModel, Field

from skillorchestra_core.llm import LlmClient, ask_structured
from skillorchestra_core.routing.model import RoutingModel
from skillorchestra_core.routing.retriever import TfidfIndex
from skillorchestra_core.routing.trace import ActiveSkill

NEIGHBOURS = 10
PROFILE_SHARE = 0.4  # of the blended score; the rest is the neighbour vote
MIN_RELATIVE = 0.25  # a skill must score at least this share of the best one to be active


@dataclass(frozen=True)
class Activation:
    skills: list[ActiveSkill]
    source: str
    note: str = ""


class RequiredSkill(BaseModel):
    skill_id: str
    weight: float = Field(default=50.0, ge=0)


class SkillAnalysis(BaseModel):
    required_skills: list[RequiredSkill] = Field(min_length=1)
    reasoning: str = ""


class SkillRetriever:
    """Per mode: profile documents of the leaf skills and the labelled train queries of the mode."""

    def __init__(self, model: RoutingModel, mode: str):
        table = model.table(mode)
        docs = [model.skills[k] for k in table.skills if k in model.skills]
        parents = {d.parent_key for d in docs if d.parent_key} | {k.rsplit(".", 1)[0] for k in table.skills if "." in k}
        self.leaves = [d.key for d in docs if d.key not in parents] or [d.key for d in docs]
        self.names = {d.key: d.name or d.key for d in docs}
        self.profiles = TfidfIndex([
            " ".join([d.key.replace(".", " ").replace("_", " "), d.name, d.description, " ".join(d.indicators),
                      " ".join(d.examples)])
            for d in (model.skills[k] for k in self.leaves)
        ])
        labelled = [(t, w) for t, m, w in model.skill_queries if m == mode]
        self.neighbour_skills = [w for _, w in labelled]
        self.neighbours = TfidfIndex([t for t, _ in labelled])
        self.position = {k: i for i, k in enumerate(self.leaves)}

    def scores(self, query: str) -> np.ndarray:
        profile = self.profiles.similarities(query)
        if not self.neighbour_skills:
            return profile
        sims = self.neighbours.similarities(query)
        top = np.argsort(-sims, kind="stable")[:NEIGHBOURS]
        top = top[sims[top] > 0]
        vote = np.zeros(len(self.leaves))
        for i in top:
            for skill, w in self.neighbour_skills[i].items():
                if skill in self.position:
                    vote[self.position[skill]] += sims[i] * w
        if len(top):
            vote /= len(top)
        return PROFILE_SHARE * profile + (1.0 - PROFILE_SHARE) * vote

    def activate(self, query: str, top_k: int = 3) -> Activation:
        scores = self.scores(query)
        if not len(scores) or scores.max() <= 0:
            return Activation([], "offline:tfidf", "no skill of this mode shares a word with the query")
        order = np.argsort(-scores, kind="stable")[:top_k]
        keep = [i for i in order if scores[i] > 0 and scores[i] >= MIN_RELATIVE * scores[order[0]]]
        total = float(sum(scores[i] for i in keep))
        return Activation([ActiveSkill(skill=self.leaves[i], name=self.names[self.leaves[i]],
                                       weight=float(scores[i]) / total, similarity=round(float(scores[i]), 6))
                           for i in keep], "offline:tfidf")


def retriever(model: RoutingModel, mode: str) -> SkillRetriever:
    return model.cached(("retriever", mode), lambda: SkillRetriever(model, mode))


def _catalog(model: RoutingModel, mode: str) -> str:
    r = retriever(model, mode)
    lines = []
    for key in r.leaves:
        d = model.skills[key]
        ind = f" (indicators: {', '.join(d.indicators[:6])})" if d.indicators else ""
        lines.append(f"- {key}: {d.name or key}. {d.description}{ind}")
    return "\n".join(lines)


def activation_messages(model: RoutingModel, mode: str, query: str, history: list[str] | None = None) -> list[dict]:
    done = "\n".join(history or []) or "(none)"
    return [
        {"role": "system", "content": (
            f"You analyse which skills a task needs in the '{mode}' mode of a routing handbook. Choose only skill ids "
            "from the catalog. Reply with JSON only: {\"required_skills\": [{\"skill_id\": \"...\", \"weight\": "
            "<relative importance, e.g. a percentage>}], \"reasoning\": \"...\"}.")},
        {"role": "user", "content": f"Skill catalog:\n{_catalog(model, mode)}\n\nSteps so far:\n{done}\n\n"
                                    f"Query:\n{query}"},
    ]


def _resolver(model: RoutingModel, mode: str):
    r = retriever(model, mode)
    by_name = {r.names[k].lower(): k for k in r.leaves} | {k.lower(): k for k in r.leaves}
    return lambda sid: by_name.get(sid.strip().lower())


def activate_llm(llm: LlmClient, model: RoutingModel, mode: str, query: str, history: list[str] | None = None,
                 top_k: int = 5) -> tuple[Activation | None, str]:
    """(activation, "") or (None, why it failed)."""
    resolve = _resolver(model, mode)

    def check(a: SkillAnalysis) -> None:
        unknown = [r.skill_id for r in a.required_skills if resolve(r.skill_id) is None]
        if unknown:
            raise ValueError(f"unknown skill id(s) for mode {mode!r}: {', '.join(unknown[:5])}")
        if sum(r.weight for r in a.required_skills) <= 0:
            raise ValueError("the weights sum to zero")

    got = ask_structured(llm, activation_messages(model, mode, query, history), SkillAnalysis,
                         purpose="routing.activation", check=check)
    if not got.ok:
        return None, got.error
    weights: dict[str, float] = {}
    for r in got.value.required_skills:
        key = resolve(r.skill_id)
        weights[key] = weights.get(key, 0.0) + r.weight
    top = sorted(weights.items(), key=lambda kv: (-kv[1], kv[0]))[:top_k]
    total = sum(w for _, w in top)
    names = retriever(model, mode).names
    skills = [ActiveSkill(skill=k, name=names.get(k, k), weight=w / total) for k, w in top if w > 0]
    return Activation(skills, f"llm:{got.model}", got.value.reasoning[:500]), ""


def activate(model: RoutingModel, mode: str, query: str, *, llm: LlmClient | None = None, method: str = "auto",
             top_k: int = 3, history: list[str] | None = None) -> Activation:
    """method: auto (LLM when one is configured, else the retriever), offline, or llm."""
    if method not in ("auto", "offline", "llm"):
        raise ValueError(f"unknown activation method {method!r}; use auto, offline or llm")
    if method == "offline":
        return retriever(model, mode).activate(query, top_k)
    configured = llm is not None and getattr(llm, "configured", True)
    if not configured:
        found = retriever(model, mode).activate(query, top_k)
        if method == "llm":
            return Activation(found.skills, found.source, "no LLM configured: used the offline retriever")
        return found
    act, error = activate_llm(llm, model, mode, query, history)
    if act is not None and act.skills:
        return act
    found = retriever(model, mode).activate(query, top_k)
    why = error or "the LLM named no skill"
    return Activation(found.skills, found.source, f"LLM activation failed ({why}); fell back to the retriever")
