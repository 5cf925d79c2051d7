"""A skill classifier in numpy/scipy: multinomial logistic regression on TF-IDF features of the query text.

Features are every word and punctuation mark (stop words included: "which of the following" tells tasks apart),
plus a few shape marks: the first word, the closing mark, whether the text starts upper-case, one mark per
upper-case letter, per double space, per space before a punctuation mark and per line break, and a length bucket.
Formatting separates tasks where topic words do not (a lower-case search query, a capitalised trivia question, a
multiple-choice stem). Terms seen in fewer than MIN_DF
training queries are dropped. Targets are the attributions' weights (soft labels, each row sums to 1). Training is
deterministic: zero start, full-batch L-BFGS with a fixed iteration cap. Probabilities are calibrated by a
temperature chosen on validation queries (see learned_activation).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass
from functools import cached_property

import numpy as np
from scipy import sparse

from skillorchestra_core.routing.batch_features import (
    counts_of_terms,
    counts_one_by_one,
    separator_lookup,
    term_counts,
)

MIN_DF = 2
C_REG = 30.0  # inverse L2 strength per training query (the loss is a mean, the penalty 1 / (C n)); chosen on val
MAX_ITER = 80
_TOKEN = re.compile(r"\w+|\S")  # words, and every other non-space character alone (punctuation), in one pass
_UPPER = re.compile(r"[A-Z]")  # upper-case letters: proper nouns, acronyms (cheap to count)
_SPACE_MARK = re.compile(r" [,.?!']")


def features(text: str) -> list[str]:
    """The terms of one text (see the module docstring); '#'-marks cannot collide with tokens."""
    out = _TOKEN.findall(text.lower())
    n = len(out)
    if n:
        first, last = out[0], out[-1]
        out.append("#first:" + first)
        out.append("#last:" + (last if not last[0].isalnum() else "word"))
        out.append("#upper" if text.lstrip()[:1].isupper() else "#lower")
    out.append(f"#len{min(int(math.log2(n + 1)), 12)}")
    out.extend(["#Cap"] * len(_UPPER.findall(text)))
    out.extend(["#2sp"] * text.count("  "))  # double spaces and spaces before punctuation: tokenised sources
    out.extend(["#sp."] * len(_SPACE_MARK.findall(text)))
    out.extend(["#nl"] * text.count("\n"))
    return out


@dataclass(frozen=True)
class Featuriser:
    """Term -> column, with smoothed idf."""

    vocab: dict[str, int]
    idf: np.ndarray

    @classmethod
    def fit(cls, texts: list[str], min_df: int = MIN_DF, terms: list[list[str]] | None = None) -> "Featuriser":
        """`terms`: the texts' `features`, when already computed."""
        df: Counter = Counter()
        for x in terms if terms is not None else map(features, texts):
            df.update(set(x))
        floor = min(min_df, max(1, len(texts) // 2))  # tiny sets keep every term
        kept = sorted(t for t, n in df.items() if n >= floor)
        idf = np.log((1.0 + len(texts)) / (1.0 + np.array([df[t] for t in kept], float))) + 1.0
        return cls({t: i for i, t in enumerate(kept)}, idf)

    def matrix(self, texts: list[str], terms: list[list[str]] | None = None) -> sparse.csr_matrix:
        """(n, V) sublinear-tf x idf rows, L2-normalised; unknown terms are ignored. `terms` as in `fit`; without
        them all texts are counted at once (batch_features: the same counts as `features` text by text)."""
        if terms is not None:
            return self._weighted(len(texts), counts_of_terms(terms, len(texts), self.vocab))
        return self._weighted(len(texts), term_counts(texts, self.vocab, features, _TOKEN, self._lookup))

    def matrix_each(self, texts: list[str]) -> sparse.csr_matrix:
        """`matrix`, counting each text's `features` one by one (the definition the batch counts are checked
        against)."""
        return self._weighted(len(texts), counts_one_by_one(texts, self.vocab, features))

    def _weighted(self, n: int, counts: tuple[np.ndarray, np.ndarray, np.ndarray]) -> sparse.csr_matrix:
        rows, cols, vals = counts
        m = sparse.csr_matrix((vals, (rows, cols)), shape=(n, len(self.vocab)))  # duplicates are summed: counts
        m.data = (1.0 + np.log(m.data)) * self.idf[m.indices]
        rows = np.repeat(np.arange(n), np.diff(m.indptr))
        norms = np.sqrt(np.bincount(rows, m.data ** 2, minlength=n))
        m.data /= np.where(norms > 0, norms, 1.0)[rows]
        return m

    def known_words(self, m: sparse.csr_matrix) -> np.ndarray:
        """(n,) bool per row of `matrix(...)`: some word (not only a shape mark) of the text is known."""
        rows = np.repeat(np.arange(m.shape[0]), np.diff(m.indptr))
        return np.bincount(rows, self._words[m.indices], minlength=m.shape[0]) > 0

    @cached_property
    def _lookup(self) -> dict[str, int]:
        """The vocabulary with the batch separator (computed once, as `_words`)."""
        return separator_lookup(self.vocab)

    @cached_property
    def _words(self) -> np.ndarray:
        """(V,) bool: the column is a word, not a shape mark (computed once; a frozen dataclass allows this cache)."""
        return np.array([not t.startswith("#") or len(t) == 1 for t in self.vocab])


@dataclass(frozen=True)
class SkillClassifier:
    skills: list[str]
    featuriser: Featuriser
    coef: np.ndarray  # (V, K)
    intercept: np.ndarray  # (K,)

    def logits(self, texts: list[str]) -> np.ndarray:
        return np.asarray(self.featuriser.matrix(texts) @ self.coef) + self.intercept

    def proba(self, texts: list[str], temperature: float = 1.0) -> np.ndarray:
        return softmax(self.logits(texts) / temperature)

    def to_dict(self) -> dict:
        """JSON data (exact: floats round-trip through JSON unchanged)."""
        terms = sorted(self.featuriser.vocab, key=self.featuriser.vocab.__getitem__)
        return {"skills": self.skills, "terms": terms, "idf": self.featuriser.idf.tolist(),
                "coef": self.coef.tolist(), "intercept": self.intercept.tolist()}

    @classmethod
    def from_dict(cls, d: dict) -> "SkillClassifier":
        vocab = {t: i for i, t in enumerate(d["terms"])}
        coef = np.array(d["coef"], float).reshape(len(vocab), len(d["skills"]))
        return cls(list(d["skills"]), Featuriser(vocab, np.array(d["idf"], float)), coef,
                   np.array(d["intercept"], float))


def softmax(z: np.ndarray) -> np.ndarray:
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


def train_classifier(texts: list[str], targets: np.ndarray, skills: list[str], *, c_reg: float = C_REG,
                     max_iter: int = MAX_ITER, merge: bool = True) -> SkillClassifier:
    """Fit on `texts` with soft `targets` (n, K) over `skills` (`merge`: identical rows as one, see below)."""
    terms = [features(t) for t in texts]
    feat = Featuriser.fit(texts, terms=terms)
    x = feat.matrix(texts, terms)
    y = np.asarray(targets, float)
    n, d, k = x.shape[0], x.shape[1], y.shape[1]
    reg = 1.0 / (c_reg * n)
    x, y, count = merge_duplicates(x, y) if merge else (x, y, None)

    def loss_grad(w: np.ndarray) -> tuple[float, np.ndarray]:
        coef, b = w[: d * k].reshape(d, k), w[d * k:]
        z = np.asarray(x @ coef) + b
        z -= z.max(axis=1, keepdims=True)
        z -= np.log(np.exp(z).sum(axis=1, keepdims=True))  # log-probabilities
        g = np.exp(z) - y
        if count is not None:  # a merged row stands for `count` identical training rows
            g *= count
            z *= count
        g /= n
        loss = -float((y * z).sum()) / n + 0.5 * reg * float((coef * coef).sum())
        return loss, np.concatenate([(xt @ g + reg * coef).ravel(), g.sum(axis=0)])

    xt = x.T.tocsr()
    w = lbfgs(loss_grad, np.zeros(d * k + k), max_iter)
    return SkillClassifier(list(skills), feat, w[: d * k].reshape(d, k).copy(), w[d * k:].copy())


def merge_duplicates(x: sparse.csr_matrix, y: np.ndarray, worth: float = 0.5
                     ) -> tuple[sparse.csr_matrix, np.ndarray, np.ndarray | None]:
    """Training rows with identical features, merged into one row carrying their count and mean target: the same
    loss and gradient in exact arithmetic (only the order of the sums differs), over fewer rows. Done only when at
    most `worth` of the rows remain (texts that differ only in words seen once, as templated questions do);
    otherwise the rows are returned as they are, with count None."""
    n = x.shape[0]
    if n < 2:
        return x, y, None
    indptr, indices, data = x.indptr, x.indices, x.data
    first: dict[bytes, int] = {}
    group = np.empty(n, dtype=np.int64)
    for r in range(n):
        lo, hi = indptr[r], indptr[r + 1]
        group[r] = first.setdefault(indices[lo:hi].tobytes() + data[lo:hi].tobytes(), len(first))
    if len(first) > worth * n:
        return x, y, None
    keep = np.unique(group, return_index=True)[1]  # the first row of each group, in group order
    count = np.bincount(group, minlength=len(keep)).astype(float)
    # Each group's rows summed in row order from zero, as np.add.at would, in one sparse product (add.at visits
    # every one of the n x K target cells one by one).
    members = sparse.csr_matrix((np.ones(n), (group, np.arange(n))), shape=(len(keep), n))
    total = np.asarray(members @ y)
    return x[keep], total / count[:, None], count[:, None]


def _dot(a: np.ndarray, b: np.ndarray) -> float:
    # An elementwise product and a sum, not BLAS: threaded BLAS on long vectors stalls on a busy machine.
    return float(np.multiply(a, b).sum())


def lbfgs(loss_grad, w: np.ndarray, max_iter: int, memory: int = 10, gtol: float = 1e-6) -> np.ndarray:
    """Plain L-BFGS with Armijo backtracking (scipy's L-BFGS-B spends most of its time in bookkeeping on ~10^5
    parameters; this is a few vector operations per step)."""
    f, g = loss_grad(w)
    hist: list[tuple[np.ndarray, np.ndarray, float]] = []
    for _ in range(max_iter):
        q, alphas = g.copy(), []
        for s_, y_, rho in reversed(hist):
            a = rho * _dot(s_, q)
            alphas.append(a)
            q -= a * y_
        if hist:
            s_, y_, _ = hist[-1]
            q *= _dot(s_, y_) / _dot(y_, y_)
        for (s_, y_, rho), a in zip(hist, reversed(alphas)):
            q += s_ * (a - rho * _dot(y_, q))
        d = -q
        slope = _dot(g, d)
        if slope >= 0:  # not a descent direction: restart from the gradient
            hist, d, slope = [], -g, -_dot(g, g)
        step = 1.0 if hist else min(1.0, 1.0 / max(np.sqrt(-slope), 1e-12))
        for _ in range(30):
            f_new, g_new = loss_grad(w + step * d)
            if f_new <= f + 1e-4 * step * slope:
                break
            step *= 0.5
        s_, y_ = step * d, g_new - g
        w, f, g = w + s_, f_new, g_new
        sy = _dot(s_, y_)
        if sy > 1e-12:
            hist = (hist + [(s_, y_, 1.0 / sy)])[-memory:]
        if float(np.abs(g).max()) < gtol:
            break
    return w


def fit_temperature(logits: np.ndarray, targets: np.ndarray) -> float:
    """The temperature (from a fixed grid, for determinism) that minimises the validation log-loss."""
    if not len(logits):
        return 1.0
    grid = np.geomspace(0.2, 5.0, 33)
    y = np.asarray(targets, float)
    losses = [-float((y * np.log(np.clip(softmax(logits / t), 1e-12, None))).sum()) for t in grid]
    return float(grid[int(np.argmin(losses))])
