"""Skill discovery per mode from the train split: offline (task labels, else clusters of query text) and the rules
for adding discovered skills to a handbook (an existing key is never overwritten: a clash gets a new key and a note).

A `ModeDiscovery` carries the new skills and, when the method itself placed queries in them (task labels, text
clusters), that placement, which attribution turns into weights.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from skillorchestra_core.handbook.content import HandbookContent, SkillSpec
from skillorchestra_core.learning import textclusters as tc
from skillorchestra_core.learning.inputs import LearnInputs
from skillorchestra_core.routing.retriever import TfidfIndex

EXAMPLES = 3
EXAMPLE_CHARS = 300


@dataclass
class ModeDiscovery:
    mode: str
    method: str  # label | tfidf-kmeans | llm:<model> | none
    skills: list[SkillSpec] = field(default_factory=list)
    placement: dict[int, dict[str, float]] = field(default_factory=dict)  # train query -> {skill key: weight}
    notes: list[str] = field(default_factory=list)
    stats: dict = field(default_factory=dict)


def slug(text: str, limit: int = 40) -> str:
    out = "_".join(p for p in re.sub(r"[^0-9a-z]+", "_", text.lower()).split("_") if p)
    return out[:limit].strip("_") or "skill"


def unattributed(content: HandbookContent, inputs: LearnInputs, mode: str) -> list[int]:
    """Train queries of the mode with no attribution yet, in id order."""
    done = {q for (q, m, _k) in content.attributions if m == mode}
    ids = inputs.outcomes(mode)["query_id"].unique()
    return sorted(int(q) for q in ids if int(q) not in done)


def discover_offline(content: HandbookContent, inputs: LearnInputs, mode: str, seed: int = 0, *,
                     task_labels: bool = True) -> ModeDiscovery:
    """Task labels where the queries carry them (unless `task_labels` is off), else a taxonomy of text clusters."""
    todo = unattributed(content, inputs, mode)
    if not todo:
        return ModeDiscovery(mode, "none", notes=[f"{mode}: every train query is already attributed"])
    o = inputs.outcomes(mode)
    tasks = o.drop_duplicates("query_id").set_index("query_id")["task"]
    labelled = [q for q in todo if task_labels and isinstance(tasks.get(q), str) and tasks.get(q)]
    found = ModeDiscovery(mode, "label" if labelled else "tfidf-kmeans")
    if labelled:
        _from_labels(found, content, inputs, labelled, tasks)
    rest = [q for q in todo if q not in set(labelled)]
    if len(rest) >= 2 * tc.MIN_CLUSTER:
        _from_clusters(found, inputs, rest, seed)
        found.method = "tfidf-kmeans" if not labelled else "label+tfidf-kmeans"
    elif rest:
        found.notes.append(f"{mode}: {len(rest)} unlabelled train queries are too few to cluster; "
                           "they are attributed by the text classifier")
    return found


def _from_labels(found: ModeDiscovery, content: HandbookContent, inputs: LearnInputs, ids: list[int], tasks) -> None:
    by_task: dict[str, list[int]] = {}
    for q in ids:
        by_task.setdefault(str(tasks[q]), []).append(q)
    for task, qs in sorted(by_task.items()):
        key = f"{found.mode}.{slug(task)}"
        same = content.skills.get(key)
        if same is None or same.provenance.get("task") != task:
            found.skills.append(SkillSpec(
                key=key, mode=found.mode, name=task, description=f"Queries labelled with task {task!r}.",
                examples=[inputs.texts[q][:EXAMPLE_CHARS] for q in qs[:EXAMPLES]],
                provenance={"source": "offline", "method": "task_label", "task": task, "queries": len(qs)}))
        for q in qs:
            found.placement[q] = {key: 1.0}


def _from_clusters(found: ModeDiscovery, inputs: LearnInputs, ids: list[int], seed: int) -> None:
    index = TfidfIndex([inputs.texts[q] for q in ids])
    x = index.matrix.tocsr()
    vocab = [t for t, _ in sorted(index.vocab.items(), key=lambda kv: kv[1])]
    y, agents = inputs.score_matrix(found.mode, ids)
    tax = tc.taxonomy(x, y, seed)
    top = tax.top
    sil = tc.silhouette(x, top.labels, np.random.default_rng(seed))
    found.stats = {"queries": len(ids), "categories": top.k, "criterion": round(top.criterion, 6),
                   "criterion_by_k": top.scores, "silhouette": None if sil is None else round(sil, 4),
                   "agents": len(agents)}
    base = {"source": "offline", "method": "tfidf-kmeans", "seed": seed,
            "criterion": "5-fold held-out log-likelihood of train outcomes"}
    for c in range(top.k):
        rows = np.flatnonzero(top.labels == c)
        terms = tc.distinguishing_terms(x, top.labels, c, vocab)
        cat_key = f"{found.mode}.{slug('_'.join(tc.name_terms(terms, 2)) or f'cluster_{c}')}"
        sub = tax.subs.get(c)
        found.skills.append(_cluster_skill(cat_key, found.mode, terms, rows, top.centroids[c], x, ids, inputs, {
            **base, "level": "category", "k": top.k, "criterion_by_k": top.scores, "queries": len(rows)}))
        if sub is None or sub.k == 1:  # a leaf category
            found.placement.update({ids[i]: {cat_key: 1.0} for i in rows})
            continue
        xs = x[rows]
        for j in range(sub.k):
            inner = rows[sub.labels == j]
            sterms = tc.distinguishing_terms(xs, sub.labels, j, vocab)
            key = f"{cat_key}.{slug('_'.join(tc.name_terms(sterms, 2)) or f'group_{j}')}"
            spec = _cluster_skill(key, found.mode, sterms, inner, sub.centroids[j], x, ids, inputs, {
                **base, "level": "sub-skill", "k": sub.k, "criterion_by_k": sub.scores, "queries": len(inner)})
            spec.parent_key = cat_key
            found.skills.append(spec)
            found.placement.update({ids[i]: {key: 1.0} for i in inner})


def _cluster_skill(key: str, mode: str, terms: list[str], rows: np.ndarray, centroid: np.ndarray, x, ids, inputs,
                   provenance: dict) -> SkillSpec:
    sims = np.asarray(x[rows] @ centroid).ravel()
    nearest = rows[np.argsort(-sims, kind="stable")[:EXAMPLES]]
    named = tc.name_terms(terms)
    shown = ", ".join(named or terms[:4]) or "no distinctive words"
    return SkillSpec(
        key=key, mode=mode, name=" / ".join(named or terms[:3]) or key.rsplit(".", 1)[-1],
        description=f"Queries whose text clusters around: {shown} ({len(rows)} train queries).",
        indicators=terms[:8], examples=[inputs.texts[ids[i]][:EXAMPLE_CHARS] for i in nearest],
        provenance={**provenance, "terms": terms[:8]})


def place_skills(content: HandbookContent, found: ModeDiscovery) -> list[SkillSpec]:
    """Add `found.skills` to `content` (parents first); an existing key gets a fresh one and a note. Returns the
    skills added and rewrites `found.placement` to the keys actually used."""
    renames: dict[str, str] = {}
    added = []
    for spec in sorted(found.skills, key=lambda k: (k.key.count("."), k.key)):
        if spec.parent_key in renames:  # children follow a renamed parent, key prefix included
            old, spec.parent_key = spec.parent_key, renames[spec.parent_key]
            if spec.key.startswith(old + "."):
                renames[spec.key] = spec.parent_key + spec.key[len(old):]
                spec.key = renames[spec.key]
        key = _free_key(content, spec.key)
        if key != spec.key:
            note = f"key {spec.key!r} was already taken; added as {key!r}"
            spec.provenance = {**spec.provenance, "note": note, "requested_key": spec.key}
            found.notes.append(f"{found.mode}: {note}")
            renames.update({k: key for k, v in renames.items() if v == spec.key})
            renames[spec.key] = key
            spec.key = key
        content.skills[key] = spec
        added.append(spec)
    if renames:
        found.placement = {q: {renames.get(k, k): w for k, w in ws.items()} for q, ws in found.placement.items()}
    return added


def _free_key(content: HandbookContent, key: str) -> str:
    if key not in content.skills:
        return key
    n = 2
    while f"{key}_{n}" in content.skills:
        n += 1
    return f"{key}_{n}"
