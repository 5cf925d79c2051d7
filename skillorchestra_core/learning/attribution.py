"""Attribution: for each train (query, mode), the skills it exercised with weights summing to 1, and who said so.

Sources: `label` (a task label placed it), `offline:tfidf-kmeans` (its text cluster), `llm:<model>` (hindsight: the
model sees which agents succeeded and failed), `offline:tfidf-centroid` (the text classifier: cosine similarity to
each leaf skill's train queries and profile). Held-out (val/test) queries are attributed by the classifier from their
text alone, so evaluation can score skill identification; learning reads train attributions only.
"""

from __future__ import annotations

from typing import Callable

import numpy as np
from scipy import sparse

from skillorchestra_core.handbook.content import HandbookContent
from skillorchestra_core.learning import llm_prompts as lp
from skillorchestra_core.learning.discovery import ModeDiscovery, unattributed
from skillorchestra_core.learning.inputs import LearnInputs
from skillorchestra_core.llm import LlmClient, ask_structured
from skillorchestra_core.routing.retriever import TfidfIndex

PURPOSE = "learning.attribution"
CLASSIFIER = "offline:tfidf-centroid"
NEAR = 0.9  # skills within this share of the best similarity share the weight (at most two)


def leaves(content: HandbookContent, mode: str) -> list[str]:
    keys = [s.key for s in content.skills_in_mode(mode)]
    parents = {s.parent_key for s in content.skills_in_mode(mode) if s.parent_key}
    return [k for k in keys if k not in parents]


def normalised(weights: dict[str, float]) -> dict[str, float]:
    total = sum(w for w in weights.values() if w > 0)
    return {k: w / total for k, w in weights.items() if w > 0} if total > 0 else {}


class TextClassifier:
    """Leaf skills of a mode as TF-IDF centroids of their attributed train queries plus their profile text."""

    def __init__(self, content: HandbookContent, inputs: LearnInputs, mode: str):
        self.skills = leaves(content, mode)
        members: dict[str, list[int]] = {k: [] for k in self.skills}
        for (q, m, k), (w, _by) in content.attributions.items():
            if m == mode and k in members and q in inputs.texts and w >= 0.5:
                members[k].append(q)
        docs = [inputs.texts[q] for k in self.skills for q in members[k]]
        owner = [i for i, k in enumerate(self.skills) for _ in members[k]]
        profiles = [_profile(content.skills[k]) for k in self.skills]
        self.index = TfidfIndex(docs + profiles)
        x = self.index.matrix.tocsr()
        n = len(docs)
        rows = np.r_[np.asarray(owner, dtype=np.int64), np.arange(len(self.skills))]
        onehot = sparse.csr_matrix((np.ones(n + len(self.skills)), (rows, np.arange(n + len(self.skills)))),
                                   shape=(len(self.skills), n + len(self.skills)))
        sums = np.asarray((onehot @ x).todense()) if len(self.skills) else np.zeros((0, 0))
        self.centroids = sums / np.maximum(np.linalg.norm(sums, axis=1, keepdims=True), 1e-12)

    def classify(self, texts: list[str]) -> list[dict[str, float]]:
        if not self.skills or not texts:
            return [{} for _ in texts]
        q = sparse.vstack([self.index.vector(t) for t in texts]).tocsr()
        sims = np.asarray(q @ self.centroids.T)
        out: list[dict[str, float]] = []
        for row in sims:
            order = np.argsort(-row, kind="stable")[:2]
            if row[order[0]] <= 0:
                out.append({})  # no shared word with any skill: left unattributed
                continue
            keep = [i for i in order if row[i] >= NEAR * row[order[0]]]
            out.append(normalised({self.skills[i]: float(row[i]) for i in keep}))
        return out


def _profile(skill) -> str:
    return " ".join([skill.key.replace(".", " ").replace("_", " "), skill.name, skill.description,
                     " ".join(skill.indicators), " ".join(skill.examples)])


def apply_placement(content: HandbookContent, found: ModeDiscovery) -> int:
    """The discovery's own placement of train queries (label or text cluster) as attributions."""
    by = "label" if found.method == "label" else f"offline:{found.method.split('+')[-1]}"
    n = 0
    done = {q for (q, m, _k) in content.attributions if m == found.mode}
    for q, weights in sorted(found.placement.items()):
        if q in done:
            continue
        for k, w in normalised(weights).items():
            src = "label" if content.skills[k].provenance.get("method") == "task_label" else by
            content.attributions[(q, found.mode, k)] = (w, src)
        n += 1
    return n


def attribute_llm(client: LlmClient, content: HandbookContent, inputs: LearnInputs, mode: str, ids: list[int], *,
                  budget: int = lp.MAX_PROMPT_CHARS, tick: Callable[[int, int], None] | None = None) -> list[str]:
    """Hindsight attribution of `ids` in batches; returns notes (failed batches fall back to the classifier)."""
    catalog_keys = leaves(content, mode)
    if not catalog_keys or not ids:
        return []
    catalog = [f"- {k}: {content.skills[k].name}. {content.skills[k].description}" for k in catalog_keys]
    resolve = {k.lower(): k for k in catalog_keys} | {content.skills[k].name.lower(): k for k in catalog_keys}
    c = inputs.contrast(mode)
    blocks = [lp.query_block(f"Q{i + 1}", inputs.texts[q], c.at[q, "succeeded"], c.at[q, "failed"],
                             inputs.outputs(q, mode)) for i, q in enumerate(ids)]
    notes = []
    groups = lp.batches(blocks, budget)
    for n, group in enumerate(groups):
        refs = {f"Q{i + 1}": ids[i] for i in group}
        got = ask_structured(client, lp.attribution_messages(mode, catalog, [blocks[i] for i in group]),
                             lp.AttributionReply, purpose=PURPOSE, check=_checker(refs, resolve))
        if got.value is None:
            notes.append(f"{mode}: attribution batch {n + 1}/{len(groups)} failed ({got.error}); "
                         "its queries were attributed by the text classifier")
        else:
            for a in got.value.attributions:
                weights: dict[str, float] = {}
                for sw in a.skills:
                    key = resolve[sw.skill_id.strip().lower()]
                    weights[key] = weights.get(key, 0.0) + sw.weight
                q = refs[a.query.strip().upper()]
                for k, w in normalised(weights).items():
                    content.attributions[(q, mode, k)] = (w, f"llm:{got.model}")
        if tick:
            tick(n + 1, len(groups))
    return notes


def _checker(refs: dict[str, int], resolve: dict[str, str]):
    """Reject a reply naming a query ref not in the batch or a skill id not in the catalog (then it is re-asked)."""
    def check(reply: lp.AttributionReply) -> None:
        bad_q = [a.query for a in reply.attributions if a.query.strip().upper() not in refs]
        bad_s = [w.skill_id for a in reply.attributions for w in a.skills if w.skill_id.strip().lower() not in resolve]
        if bad_q or bad_s:
            raise ValueError("unknown " + "; ".join(filter(None, [
                f"query ref(s) {', '.join(bad_q[:5])}" if bad_q else "",
                f"skill id(s) {', '.join(bad_s[:5])}" if bad_s else ""])))
    return check


def attribute_rest(content: HandbookContent, inputs: LearnInputs, mode: str) -> tuple[int, int]:
    """The text classifier for train queries still unattributed, and for held-out queries of the mode (text only).
    Returns (train, held-out) counts attributed."""
    clf = TextClassifier(content, inputs, mode)
    todo = unattributed(content, inputs, mode)
    held_done = {q for (q, m, _k) in content.attributions if m == mode}
    held = [q for q in inputs.heldout_ids(mode) if q not in held_done]
    n_train = _classify_into(content, clf, mode, todo, inputs.texts)
    n_held = _classify_into(content, clf, mode, held, inputs.heldout_texts)
    return n_train, n_held


def _classify_into(content, clf: TextClassifier, mode: str, ids: list[int], texts: dict[int, str]) -> int:
    n = 0
    for q, weights in zip(ids, clf.classify([texts[q] for q in ids])):
        for k, w in weights.items():
            content.attributions[(q, mode, k)] = (w, CLASSIFIER)
        n += bool(weights)
    return n
