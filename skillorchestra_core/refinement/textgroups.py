"""Two groups of queries by their text: TF-IDF rows and seeded spherical 2-means (best of several restarts).

Groups come from the text alone, never from outcomes, so the Bayes factor that tests them is not flattered by the
grouping, and a child skill found this way is one the router can recognise in a new query. Numbers are dropped
before weighting: templated questions differ in their numbers, which say nothing about the kind of task.
"""

from __future__ import annotations

import re

import numpy as np
from scipy import sparse

from skillorchestra_core.routing.retriever import TfidfIndex

_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
RESTARTS = 8
MAX_ITER = 50


def text_matrix(texts: list[str]) -> tuple[sparse.csr_matrix, list[str]]:
    """L2-normalised TF-IDF rows of `texts` (numbers removed) and the vocabulary in column order."""
    index = TfidfIndex([_NUMBER.sub(" ", t) for t in texts])
    terms = sorted(index.vocab, key=lambda term: index.vocab[term])
    return sparse.csr_matrix(index.matrix), terms


def _init(x: sparse.csr_matrix, rng: np.random.Generator) -> np.ndarray:
    """k-means++ for two centres under cosine distance."""
    n = x.shape[0]
    first = x[int(rng.integers(n))].toarray().ravel()
    dist = np.clip(1.0 - x @ first, 0.0, None)
    p = dist / dist.sum() if dist.sum() > 0 else np.full(n, 1.0 / n)
    second = x[int(rng.choice(n, p=p))].toarray().ravel()
    return np.vstack([first, second])


def _run(x: sparse.csr_matrix, rng: np.random.Generator) -> tuple[np.ndarray, float]:
    centres = _init(x, rng)
    labels = np.full(x.shape[0], -1)
    for _ in range(MAX_ITER):
        sims = np.asarray(x @ centres.T)
        new = sims.argmax(axis=1)
        if (new == labels).all() or len(np.unique(new)) < 2:
            labels = new
            break
        labels = new
        for k in (0, 1):
            c = np.asarray(x[labels == k].sum(axis=0)).ravel()
            norm = np.linalg.norm(c)
            centres[k] = c / norm if norm > 0 else centres[k]
    sims = np.asarray(x @ centres.T)
    return labels, float((1.0 - sims[np.arange(len(labels)), labels]).sum())


def two_groups(texts: list[str], rng: np.random.Generator) -> np.ndarray | None:
    """0/1 group per text, or None when the texts do not separate (too few, or all alike)."""
    if len(texts) < 4:
        return None
    x, _ = text_matrix(texts)
    if x.shape[1] < 2:
        return None
    best, best_cost = None, np.inf
    for _ in range(RESTARTS):
        labels, cost = _run(x, rng)
        if len(np.unique(labels)) == 2 and cost < best_cost - 1e-12:
            best, best_cost = labels, cost
    if best is None:
        return None
    return best if best[0] == 0 else 1 - best  # group 0 holds the first query: a stable labelling


def distinguishing_terms(texts: list[str], labels: np.ndarray, top: int = 5) -> tuple[list[str], list[str]]:
    """Terms most over-represented in each group (mean TF-IDF weight in the group minus in the other)."""
    x, terms = text_matrix(texts)
    if not terms:
        return [], []
    out = []
    for k in (0, 1):
        inside = np.asarray(x[labels == k].mean(axis=0)).ravel()
        outside = np.asarray(x[labels != k].mean(axis=0)).ravel() if (labels != k).any() else 0.0
        score = inside - outside
        order = np.argsort(-score, kind="stable")[:top]
        out.append([terms[i] for i in order if score[i] > 0])
    return out[0], out[1]

