"""An offline TF-IDF retriever in numpy/scipy: cosine similarity of a query to a set of documents.

Tokens are lower-cased words (unicode letters and digits) minus a short stop list; weights are sublinear tf times
smoothed idf, rows L2-normalised. Unknown query words are ignored.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from itertools import repeat

import numpy as np
from scipy import sparse

_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_SEP = "\x00"
_WORD_OR_SEP = re.compile(r"[^\W_]+|\x00")  # the words of texts joined by NUL, and each NUL
STOPWORDS = frozenset(
    "a an and are as at be by did do does for from has have how in is it its of on or that the their them then there "
    "these this to was were what when where which who whom why will with would you your".split()
)


def tokenize(text: str) -> list[str]:
    return [t for t in _WORD.findall(text.lower()) if t not in STOPWORDS and (len(t) > 1 or t.isdigit())]


class TfidfIndex:
    def __init__(self, documents: list[str]):
        counts = [Counter(tokenize(d)) for d in documents]
        vocab: dict[str, int] = {}
        for c in counts:
            for term in c:
                vocab.setdefault(term, len(vocab))
        self.vocab = vocab
        n_docs = len(documents)
        rows, cols, vals = [], [], []
        for i, c in enumerate(counts):
            for term, tf in c.items():
                rows.append(i)
                cols.append(vocab[term])
                vals.append(1.0 + math.log(tf))
        m = sparse.csr_matrix((vals, (rows, cols)), shape=(n_docs, len(vocab)), dtype=float)
        df = np.bincount(m.indices, minlength=len(vocab)) if len(vocab) else np.zeros(0)
        self.idf = np.log((1.0 + n_docs) / (1.0 + df)) + 1.0
        m = m.multiply(self.idf).tocsr() if len(vocab) else m
        norms = np.sqrt(np.asarray(m.multiply(m).sum(axis=1)).ravel())
        self.matrix = sparse.diags(1.0 / np.where(norms > 0, norms, 1.0)) @ m if n_docs else m
        self.size = n_docs

    def vector(self, text: str) -> sparse.csr_matrix:
        c = Counter(t for t in tokenize(text) if t in self.vocab)
        if not c:
            return sparse.csr_matrix((1, len(self.vocab)))
        cols = [self.vocab[t] for t in c]
        vals = np.array([(1.0 + math.log(tf)) for tf in c.values()]) * self.idf[cols]
        vals /= np.linalg.norm(vals)
        return sparse.csr_matrix((vals, ([0] * len(cols), cols)), shape=(1, len(self.vocab)))

    def vectors(self, texts: list[str]) -> sparse.csr_matrix:
        """(Q, V) normalised query vectors (a zero row when no word is known). The texts are tokenised in one regex
        pass over their NUL-joined text (stop words and lone letters are never in the vocabulary, so looking every
        word up filters them as `tokenize` does); texts holding NUL are tokenised one by one."""
        if any(_SEP in t for t in texts):
            return self._vectors_each(texts)
        if getattr(self, "_lookup", None) is None:
            self._lookup = {**self.vocab, _SEP: -2}
        toks = _WORD_OR_SEP.findall(_SEP.join(texts).lower())
        ids = np.fromiter(map(self._lookup.get, toks, repeat(-1)), np.int64, len(toks))
        known = np.flatnonzero(ids >= 0)
        rows = np.searchsorted(np.flatnonzero(ids == -2), known)
        m = sparse.csr_matrix((np.ones(len(known)), (rows, ids[known])), shape=(len(texts), len(self.vocab)))
        return self._normalised(m)

    def _vectors_each(self, texts: list[str]) -> sparse.csr_matrix:
        """`vectors`, text by text through `tokenize` (the definition)."""
        get = self.vocab.get
        rows: list[int] = []
        cols: list[int] = []
        vals: list[int] = []
        for r, text in enumerate(texts):
            c = Counter(j for j in map(get, tokenize(text)) if j is not None)
            rows.extend([r] * len(c))
            cols.extend(c)
            vals.extend(c.values())
        m = sparse.csr_matrix((np.asarray(vals, float), (rows, cols)), shape=(len(texts), len(self.vocab)))
        return self._normalised(m)

    def _normalised(self, m: sparse.csr_matrix) -> sparse.csr_matrix:
        m.sum_duplicates()  # term counts
        m.data = (1.0 + np.log(m.data)) * self.idf[m.indices] if m.nnz else m.data
        norms = np.sqrt(np.asarray(m.multiply(m).sum(axis=1)).ravel())
        return (sparse.diags(1.0 / np.where(norms > 0, norms, 1.0)) @ m).tocsr()

    def similarity_matrix(self, texts: list[str]) -> np.ndarray:
        """(Q, documents) cosine similarities, one sparse product."""
        if self.size == 0 or not self.vocab:
            return np.zeros((len(texts), self.size))
        return np.asarray((self.vectors(texts) @ self.matrix.T).todense())

    def similarities(self, text: str) -> np.ndarray:
        """Cosine similarity of `text` to every document (zeros when no word is known)."""
        if self.size == 0 or not self.vocab:
            return np.zeros(self.size)
        return np.asarray((self.matrix @ self.vector(text).T).todense()).ravel()
