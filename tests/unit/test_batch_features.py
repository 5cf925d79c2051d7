"""The batch featuriser (one regex pass over the joined texts, marks counted with numpy) gives exactly the matrix of
the one-query featuriser (`features` text by text), on awkward text and on the real LLMRouter queries."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from scipy import sparse

from skillorchestra_core.routing.batch_features import SMALL_BATCH
from skillorchestra_core.routing.classifier import Featuriser, features

SHARED_LLMROUTER = (Path(__file__).resolve().parents[2].parent / "shared" / "data" / "llmrouter").resolve()

AWKWARD = [
    "", "   ", "\n\n", "?", "Which emperor ruled Rome?", "who ruled rome in 200", "  Leading spaces, Then Caps .",
    "double  spaces   triple    four", "a space before marks , . ? ! ' end", "line\nbreaks\r\nand\ttabs",
    "ΟΔΟΣ ΟΔΟΣ. Σ ΑΣ-ΒΣ", "İstanbul İ ǅemal", "snake_case_word _lead trail_ __", "١٢٣ ٤ digits ²³ ½",
    "emoji 🙂🙂 and ZWJ 👩‍💻", "e\u0301 combining", "lone \ud800 surrogate", "ends with a word", "ends with a mark!",
    "NUL \x00 inside", "ALL CAPS TEXT", "x", "1", "# hash #first:x #len3 #Cap", "ﬁ ligature ß Straße",
]


def _random_texts(seed: int, n: int) -> list[str]:
    rng = np.random.default_rng(seed)
    pool = list("aAbBzZ09 _,.?!'\n\t-#()") + ["  ", " ,", "Σ", "ς", "İ", "é", "١", "🙂", "\u0301", "ǅ", "the ",
                                                 "Which ", "word", "\u00a0", "\u2003"]
    return ["".join(rng.choice(pool, rng.integers(0, 40))) for _ in range(n)]


def _equal(a: sparse.csr_matrix, b: sparse.csr_matrix) -> bool:
    a, b = a.tocsr(), b.tocsr()
    a.sort_indices()
    b.sort_indices()
    return (a.shape == b.shape and np.array_equal(a.indptr, b.indptr) and np.array_equal(a.indices, b.indices)
            and np.array_equal(a.data, b.data))


def _check(f: Featuriser, texts: list[str]) -> None:
    batch = f.matrix(texts)
    assert _equal(batch, f.matrix_each(texts))
    assert _equal(batch, sparse.vstack([f.matrix([t]) for t in texts]).tocsr())
    assert np.array_equal(f.known_words(batch), f.known_words(f.matrix_each(texts)))


def test_the_batch_featuriser_equals_the_one_query_featuriser_on_awkward_text():
    texts = AWKWARD + _random_texts(0, 300)
    f = Featuriser.fit(texts, min_df=1)  # every term known, marks included
    assert {"#Cap", "#2sp", "#sp.", "#nl", "#upper", "#lower", "#last:word", "#len0"} <= set(f.vocab)
    _check(f, texts)
    _check(f, [t for t in texts if "\x00" not in t])  # the one-pass path for the whole batch
    _check(f, _random_texts(1, 200))  # partly unknown terms
    _check(f, ["only one query?"])
    _check(f, texts[:SMALL_BATCH])  # the smallest batch that takes the one-pass path
    assert f.matrix([]).shape == (0, len(f.vocab))


def test_a_batch_counts_what_features_lists():
    f = Featuriser.fit(AWKWARD, min_df=1)
    text = "  Two  Caps , here\nand  there ."
    m = f.matrix([text, "other"]).tocsr()
    terms = {t: i for t, i in f.vocab.items()}
    counts = {t: features(text).count(t) for t in set(features(text)) if t in terms}
    assert set(m[0].indices.tolist()) == {terms[t] for t in counts}
    assert counts["#2sp"] == 3 and counts["#sp."] == 2 and counts["#Cap"] == 2  # marks counted, not just present


def test_the_batch_featuriser_equals_the_one_query_featuriser_on_the_llmrouter_queries():
    train, test = SHARED_LLMROUTER / "default_query_train.jsonl", SHARED_LLMROUTER / "default_query_test.jsonl"
    if not train.exists() or not test.exists():
        pytest.skip(f"LLMRouter queries not found at {SHARED_LLMROUTER} (they live in ../shared/data/llmrouter)")

    def texts(path: Path) -> list[str]:
        return [json.loads(line)["query"] for line in path.read_text(encoding="utf-8").split("\n") if line.strip()]

    f = Featuriser.fit(texts(train))
    _check(f, texts(test))


def test_the_profile_retriever_vectorises_a_batch_as_it_does_one_query():
    from skillorchestra_core.routing.retriever import TfidfIndex

    docs = AWKWARD + _random_texts(2, 100) + ["the a an of x 7 Which word emperor Rome"]
    index = TfidfIndex(docs)
    for texts in (AWKWARD + _random_texts(3, 200), [t for t in AWKWARD if "\x00" not in t], ["Which word?"], []):
        batch = index.vectors(texts)
        assert _equal(batch, index._vectors_each(texts))
        if texts:
            assert _equal(batch, sparse.vstack([index.vectors([t]) for t in texts]).tocsr())
            assert np.array_equal(index.similarity_matrix(texts),
                                  np.vstack([index.similarity_matrix([t]) for t in texts]))
