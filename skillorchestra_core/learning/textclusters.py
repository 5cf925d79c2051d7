"""Clusters of query text for offline skill discovery: spherical k-means on TF-IDF rows, k chosen by a criterion.

The criterion is the cross-validated predictive log-likelihood of the agents' recorded outcomes under one Beta
profile per cluster (fit on four folds of the train queries, scored on the fifth): a clustering is worth its extra
clusters only when they predict how agents fare on unseen queries, which is what a skill is for. Clusters are of
text alone, so a new query can be placed in one by its text. The mean cosine silhouette is reported beside it.
A taxonomy is two levels: categories, then sub-skills inside each category chosen by the same criterion.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy import sparse

TOP_CANDIDATES = (2, 3, 4, 5, 6, 8, 10, 12)
SUB_CANDIDATES = (1, 2, 3, 4, 6, 8)
MIN_CLUSTER = 20  # queries per cluster on average: fewer give profiles that are mostly prior
MIN_SIZE = 5  # no cluster smaller than this
# Words too common to name a cluster by (the retriever's stop list already drops the commonest).
NAME_STOP = frozenset(
    "about after again all also am any because been before being but can could each even every few find first "
    "following get give go he her here hers him his if into just like make many me more most much my no not now "
    "one only other our out over own same she should so some such than too up us very way we well which while "
    "who why yes yet".split())
RESTARTS = 3
FOLDS = 5
PRIOR_STRENGTH = 2.0  # the profiles shrink to each agent's pooled rate, as the handbook's default prior does


@dataclass(frozen=True)
class Clustering:
    k: int
    labels: np.ndarray  # (n,) cluster per row
    centroids: np.ndarray  # (k, V) unit rows
    criterion: float  # mean held-out log-likelihood per query (higher is better)
    scores: dict[int, float] = field(default_factory=dict)  # criterion of every k tried


def spherical_kmeans(x: sparse.csr_matrix, k: int, rng: np.random.Generator, iters: int = 40):
    """(labels, unit centroids, inertia = sum of 1 - cosine) with k-means++ seeding on cosine distance."""
    n = x.shape[0]
    cents = [x[int(rng.integers(n))].toarray().ravel()]
    dist = 1.0 - x @ cents[0]
    for _ in range(1, k):
        p = np.maximum(dist, 0.0)
        pick = int(rng.choice(n, p=p / p.sum())) if p.sum() > 0 else int(rng.integers(n))
        cents.append(x[pick].toarray().ravel())
        dist = np.minimum(dist, 1.0 - x @ cents[-1])
    c = np.array(cents)
    labels = np.full(n, -1)
    for _ in range(iters):
        new = np.asarray(x @ c.T).argmax(axis=1)
        if (new == labels).all():
            break
        labels = new
        sums = np.asarray((sparse.csr_matrix((np.ones(n), (labels, np.arange(n))), shape=(k, n)) @ x).todense())
        norms = np.linalg.norm(sums, axis=1, keepdims=True)
        c = np.where(norms > 0, sums / np.maximum(norms, 1e-12), c)  # an emptied cluster keeps its centre
    sim = np.asarray(x @ c.T)
    return labels, c, float((1.0 - sim.max(axis=1)).sum())


def heldout_loglik(labels: np.ndarray, k: int, y: np.ndarray, rng: np.random.Generator) -> float:
    """Mean per-query log-likelihood of held-out outcomes `y` (n, A; NaN = no attempt) under per-cluster posterior
    means fit on the other folds, with the handbook's hierarchical prior (centred on each agent's pooled rate)."""
    n = len(labels)
    fold = rng.permutation(n) % FOLDS
    seen = ~np.isnan(y)
    y0 = np.where(seen, y, 0.0)
    onehot = np.zeros((k, n))
    onehot[labels, np.arange(n)] = 1.0
    total = 0.0
    for f in range(FOLDS):
        fit, test = fold != f, fold == f
        succ = onehot[:, fit] @ y0[fit]
        tries = onehot[:, fit] @ seen[fit]
        pooled = (succ.sum(axis=0) + 1.0) / (tries.sum(axis=0) + 2.0)  # each agent's rate on the fit folds
        p = ((succ + PRIOR_STRENGTH * pooled) / (tries + PRIOR_STRENGTH))[labels[test]]
        yt, st = y0[test], seen[test]
        total += float((st * (yt * np.log(p) + (1.0 - yt) * np.log1p(-p))).sum())
    return total / max(n, 1)


def choose_clustering(x: sparse.csr_matrix, y: np.ndarray, candidates, rng_seed: int) -> Clustering:
    """The candidate k with the best criterion (ties to the smaller k); k = 1 is one cluster of everything."""
    n = x.shape[0]
    best: Clustering | None = None
    scores: dict[int, float] = {}
    for k in candidates:
        if k > 1 and (n / k < MIN_CLUSTER or k >= n):
            continue
        if k == 1:
            labels, cents = np.zeros(n, dtype=np.int64), _centroids(x, np.zeros(n, dtype=np.int64), 1)
        else:
            runs = [spherical_kmeans(x, k, np.random.default_rng([rng_seed, k, r])) for r in range(RESTARTS)]
            labels, cents, _ = min(runs, key=lambda r: r[2])
            if np.bincount(labels, minlength=k).min() < MIN_SIZE:
                continue
        score = heldout_loglik(labels, k, y, np.random.default_rng([rng_seed, 7919]))
        scores[k] = round(score, 6)
        if best is None or score > best.criterion + 1e-9:
            best = Clustering(k, labels, cents, score)
    if best is None:  # too few queries for any split
        zero = np.zeros(n, dtype=np.int64)
        best = Clustering(1, zero, _centroids(x, zero, 1), heldout_loglik(zero, 1, y, np.random.default_rng(0)))
    return Clustering(best.k, best.labels, best.centroids, best.criterion, scores)


def _centroids(x: sparse.csr_matrix, labels: np.ndarray, k: int) -> np.ndarray:
    n = x.shape[0]
    sums = np.asarray((sparse.csr_matrix((np.ones(n), (labels, np.arange(n))), shape=(k, n)) @ x).todense())
    return sums / np.maximum(np.linalg.norm(sums, axis=1, keepdims=True), 1e-12)


def silhouette(x: sparse.csr_matrix, labels: np.ndarray, rng: np.random.Generator, sample: int = 1500) -> float | None:
    """Mean cosine silhouette on a seeded sample of rows (None for one cluster)."""
    k = int(labels.max()) + 1 if len(labels) else 0
    if k < 2:
        return None
    rows = np.sort(rng.choice(x.shape[0], min(sample, x.shape[0]), replace=False))
    xs, lab = x[rows], labels[rows]
    dist = 1.0 - np.asarray((xs @ xs.T).todense())
    onehot = np.zeros((len(rows), k))
    onehot[np.arange(len(rows)), lab] = 1.0
    sums, counts = dist @ onehot, onehot.sum(axis=0)
    own = counts[lab]
    a = sums[np.arange(len(rows)), lab] / np.maximum(own - 1.0, 1.0)
    other = np.where(counts > 0, sums / np.maximum(counts, 1.0), np.inf)
    other[np.arange(len(rows)), lab] = np.inf
    b = other.min(axis=1)
    s = np.where(own > 1, (b - a) / np.maximum(np.maximum(a, b), 1e-12), 0.0)
    return float(s.mean())


def distinguishing_terms(x: sparse.csr_matrix, labels: np.ndarray, cluster: int, vocab: list[str],
                         top: int = 20) -> list[str]:
    """Terms whose mean weight in the cluster most exceeds their mean weight elsewhere."""
    inside = labels == cluster
    if not inside.any():
        return []
    mean_in = np.asarray(x[inside].mean(axis=0)).ravel()
    mean_out = np.asarray(x[~inside].mean(axis=0)).ravel() if (~inside).any() else np.zeros_like(mean_in)
    lift = mean_in - mean_out
    order = np.argsort(-lift, kind="stable")[:top]
    return [vocab[i] for i in order if lift[i] > 0]


def name_terms(terms: list[str], top: int = 3) -> list[str]:
    """The terms fit to name a cluster: words of three letters or more outside the common-word list."""
    return [t for t in terms if t.isalpha() and len(t) >= 3 and t not in NAME_STOP][:top]


@dataclass(frozen=True)
class Taxonomy:
    top: Clustering
    subs: dict[int, Clustering | None]  # category -> its sub-clustering (k = 1: the category is a leaf)


def taxonomy(x: sparse.csr_matrix, y: np.ndarray, seed: int) -> Taxonomy:
    top = choose_clustering(x, y, TOP_CANDIDATES, seed)
    subs = {}
    for c in range(top.k):
        rows = np.flatnonzero(top.labels == c)
        subs[c] = choose_clustering(x[rows], y[rows], SUB_CANDIDATES, seed + 1 + c) if len(rows) else None
    return Taxonomy(top, subs)
