"""Skill activation: which skills a query needs in a mode, with weights and where they came from.

Offline (the default): where the mode has labelled train queries (attributions), a classifier trained on them whose
calibrated probabilities are the weights, with profile similarity only for skills without labelled queries
(routing.learned_activation; calibration and how many skills to keep are chosen on val and stored with the model).
A mode with no labelled query falls back to a TF-IDF retriever over each leaf skill's profile (key, name,
description, indicators, examples). With an LLM configured: the orchestrator prompt asks for `required_skills` as
JSON (validated, re-asked once), falling back to the offline path with the reason recorded.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from pydantic import BaseModel, Field

from skillorchestra_core.llm import LlmClient, ask_structured
from skillorchestra_core.routing.classifier import SkillClassifier
from skillorchestra_core.routing.learned_activation import BatchActivation, LearnedActivator
from skillorchestra_core.routing.model import RoutingModel
from skillorchestra_core.routing.retriever import TfidfIndex
from skillorchestra_core.routing.trace import ActiveSkill

MIN_RELATIVE = 0.25  # profile-only retrieval: a skill must score at least this share of the best one


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
    """Per mode: the leaf skills and their profile documents (the fallback without labelled queries)."""

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
        self.position = {k: i for i, k in enumerate(self.leaves)}

    def profile_matrix(self, texts: list[str]) -> np.ndarray:
        """(Q, leaves) profile similarities."""
        return self.profiles.similarity_matrix(texts)

    def batch(self, texts: list[str], top_k: int = 3) -> BatchActivation:
        """Profile similarity: the top_k leaves scoring at least MIN_RELATIVE of the best, weights by score."""
        sims = self.profile_matrix(texts)
        known = sims.max(axis=1, initial=0.0) > 0
        ranks = np.argsort(np.argsort(-sims, axis=1, kind="stable"), axis=1, kind="stable")
        keep = (ranks < top_k) & (sims > 0) & (sims >= MIN_RELATIVE * sims.max(axis=1, keepdims=True, initial=0.0))
        w = np.where(keep, sims, 0.0)
        total = w.sum(axis=1, keepdims=True)
        w = np.divide(w, total, out=np.zeros_like(w), where=total > 0)
        return BatchActivation(self.leaves, w, sims, np.zeros(len(self.leaves), bool), known, "offline:tfidf")


def retriever(model: RoutingModel, mode: str) -> SkillRetriever:
    return model.cached(("retriever", mode), lambda: SkillRetriever(model, mode))


def activator(model: RoutingModel, mode: str) -> LearnedActivator | None:
    """The mode's learned activator, trained once per model; None when the mode has no labelled train query."""
    def build():
        act = LearnedActivator(model, mode, retriever(model, mode))
        return act if act.classifier is not None else None
    return model.cached(("activator", mode), build)


def restore_activators(model: RoutingModel, classifiers: dict[str, dict]) -> None:
    """Install trained classifiers (`SkillClassifier.to_dict()` per mode, from a snapshot): no retraining."""
    for mode, data in classifiers.items():
        if mode in model.modes:
            act = LearnedActivator(model, mode, retriever(model, mode), SkillClassifier.from_dict(data))
            model.cached(("activator", mode), lambda a=act: a)


def settle_activation(model: RoutingModel) -> dict:
    """Train every mode's activator (choosing its settings on val when not stored yet) and return
    `model.settings["activation"]`: {mode: ActivationSettings as a dict} for the modes with labelled queries."""
    for mode in model.modes:
        activator(model, mode)
    return model.settings.get("activation", {})


def activate_batch(model: RoutingModel, mode: str, texts: list[str], top_k: int = 3) -> BatchActivation:
    """Offline activation of many queries at once (the classifier, else profile similarity)."""
    act = activator(model, mode)
    return act.batch(texts, top_k) if act is not None else retriever(model, mode).batch(texts, top_k)


def activate_offline(model: RoutingModel, mode: str, query: str, top_k: int = 3) -> Activation:
    b = activate_batch(model, mode, [query], top_k)
    if not b.known[0] or b.weights[0].max(initial=0.0) <= 0:
        return Activation([], b.source, "no skill of this mode shares a word with the query")
    names = retriever(model, mode).names
    w, p = b.weights[0], b.probability[0]
    order = [i for i in np.argsort(-w, kind="stable") if w[i] > 0]
    return Activation([ActiveSkill(
        skill=b.skills[i], name=names.get(b.skills[i], b.skills[i]), weight=float(w[i]),
        similarity=None if b.labelled[i] else round(float(p[i]), 6),
        probability=round(float(p[i]), 6) if b.labelled[i] else None,
        source="classifier" if b.labelled[i] else "profile") for i in order], b.source)


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
    if got.value is None:
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
        return activate_offline(model, mode, query, top_k)
    if llm is None or not getattr(llm, "configured", True):
        found = activate_offline(model, mode, query, top_k)
        if method == "llm":
            return Activation(found.skills, found.source,
                              f"no LLM configured: used the offline activation ({found.source})")
        return found
    act, error = activate_llm(llm, model, mode, query, history)
    if act is not None and act.skills:
        return act
    found = activate_offline(model, mode, query, top_k)
    why = error or "the LLM named no skill"
    return Activation(found.skills, found.source,
                      f"LLM activation failed ({why}); fell back to the offline activation ({found.source})")
