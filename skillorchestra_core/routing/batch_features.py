"""The classifier's term counts for many texts at once: the same counts as `classifier.features` text by text.

Text by text, three regex passes and the building of a term list per query cost a third of batch activation. Here
the lower-cased texts are joined by NUL (a token of its own, which ends every word) and tokenised in one regex pass;
token ids come from one dict lookup per token straight into an int array, and the shape marks are counted with numpy
over the joined text's code points (upper-case letters, line breaks, a space before a punctuation mark). Only the
first and last token, the leading case, the length bucket and the double spaces are read per text. Small batches
and texts that hold NUL themselves take the text-by-text path. (Tokenising in numpy over code points, with hashed
tokens, was tried: the regex pass is faster.)
"""

from __future__ import annotations

import math
from itertools import repeat
from typing import Callable, Iterable

import numpy as np

SEP = "\x00"
SMALL_BATCH = 16  # fewer texts: one by one (the batch path's fixed numpy cost is worth it from about here)
_SEP_ID = -2
_SPACE_MARKS = np.array([ord(c) for c in ",.?!'"], np.uint32)


def term_counts(texts: list[str], vocab: dict[str, int], features: Callable[[str], list[str]],
                token_re, lookup: dict[str, int] | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(rows, cols, counts) of the known terms of every text (duplicates possible: summed by the sparse matrix).
    `lookup` is separator_lookup(vocab), kept by the caller across batches; `token_re` and `features` are the
    classifier's tokeniser and its text-by-text definition."""
    if len(texts) < SMALL_BATCH or any(SEP in x for x in texts):
        return counts_one_by_one(texts, vocab, features)
    if lookup is None:
        lookup = separator_lookup(vocab)
    n = len(texts)
    joined = SEP.join(texts)
    toks = token_re.findall(joined.lower())
    ids = np.fromiter(map(lookup.get, toks, repeat(-1)), np.int64, len(toks))
    # Row labels by binary search over the separators' positions (a cumulative sum over every token is slower).
    seps = np.flatnonzero(ids == _SEP_ID)
    row_first = np.concatenate([[0], seps + 1])
    n_tok = (np.concatenate([seps, [len(toks)]]) - row_first).tolist()  # text r: tokens row_first[r] + 0..n-1
    known = np.flatnonzero(ids >= 0)
    rows, cols = [np.searchsorted(seps, known)], [ids[known]]
    vals = [np.ones(len(known))]

    # Marks once per text: first word, closing mark, leading case, length bucket.
    get = vocab.get
    mark_rows, mark_cols = [], []
    marks: tuple[str, ...]
    for r, (x, k, t) in enumerate(zip(texts, n_tok, row_first.tolist())):
        if k:
            first, last = toks[t], toks[t + k - 1]
            marks = ("#first:" + first, "#last:" + (last if not last[0].isalnum() else "word"),
                     "#upper" if x.lstrip()[:1].isupper() else "#lower", f"#len{min(int(math.log2(k + 1)), 12)}")
        else:
            marks = ("#len0",)
        for m in marks:
            j = get(m)
            if j is not None:
                mark_rows.append(r)
                mark_cols.append(j)
    rows.append(np.array(mark_rows, np.int64))
    cols.append(np.array(mark_cols, np.int64))
    vals.append(np.ones(len(mark_rows)))

    # Counted marks over the original text's code points (the separator is code 0).
    codes = _codes(joined)
    breaks = np.flatnonzero(codes == 0)

    def per_text(positions: np.ndarray) -> np.ndarray:
        return np.bincount(np.searchsorted(breaks, positions), minlength=n)

    spaces = np.flatnonzero(codes[:-1] == 32)
    counted = {
        "#Cap": per_text(np.flatnonzero((codes >= 65) & (codes <= 90))),
        "#2sp": np.fromiter((x.count("  ") for x in texts), np.int64, n),  # non-overlapping pairs, as str.count
        "#sp.": per_text(spaces[np.isin(codes[spaces + 1], _SPACE_MARKS)]),
        "#nl": per_text(np.flatnonzero(codes == 10)),
    }
    for term, count in counted.items():
        j = get(term)
        if j is not None:
            has = np.flatnonzero(count)
            rows.append(has)
            cols.append(np.full(len(has), j, np.int64))
            vals.append(count[has].astype(float))
    return np.concatenate(rows), np.concatenate(cols), np.concatenate(vals)


def counts_one_by_one(texts: list[str], vocab: dict[str, int],
                      features: Callable[[str], list[str]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """term_counts text by text, straight from `features` (the definition; one 1 per occurrence)."""
    return counts_of_terms(map(features, texts), len(texts), vocab)


def counts_of_terms(terms: Iterable[list[str]], n: int,
                    vocab: dict[str, int]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """term_counts of `n` texts whose terms are already known."""
    get = vocab.get
    ids: list[int] = []
    lengths = np.empty(n, dtype=np.int64)
    for r, x in enumerate(terms):
        before = len(ids)
        ids.extend(map(get, x, repeat(-1)))
        lengths[r] = len(ids) - before
    cols = np.asarray(ids, dtype=np.int64)
    rows = np.repeat(np.arange(n), lengths)
    known = cols >= 0
    return rows[known], cols[known], np.ones(int(known.sum()))


def separator_lookup(vocab: dict[str, int]) -> dict[str, int]:
    """`vocab` with the separator token mapped to -2 (a NUL term, should the vocabulary hold one, is never counted:
    texts holding NUL take the text-by-text path)."""
    return {**vocab, SEP: _SEP_ID}


def _codes(text: str) -> np.ndarray:
    return np.frombuffer(text.encode("utf-32-le", "surrogatepass"), np.uint32)
