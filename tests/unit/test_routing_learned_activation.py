"""The learned activation: a deterministic classifier, settings chosen on val that travel in the snapshot, batch and
single activation agreeing, and the accuracy bar on the real LLMRouter test split (by text only)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from sqlmodel import select
from support.handbooks import routing_models

from skillorchestra_core.db import session
from skillorchestra_core.db.models import Query
from skillorchestra_core.handbook.store import load_version
from skillorchestra_core.routing.activation import activate, activate_batch, activator, settle_activation
from skillorchestra_core.routing.classifier import Featuriser, fit_temperature, train_classifier
from skillorchestra_core.routing.learned_activation import keep_weights
from skillorchestra_core.routing.snapshot import from_snapshot, to_snapshot

SHARED_LLMROUTER = (Path(__file__).resolve().parents[2].parent / "shared" / "data" / "llmrouter").resolve()
TEXTS = ["Compute 3 plus 4", "Compute the sum of 2 and 9", "who ruled rome in 200", "Which emperor ruled Rome?",
         "Write a python function", "Fix the python loop"]
Y = np.repeat(np.eye(3), 2, axis=0)


def test_training_is_deterministic_and_probabilities_are_distributions():
    a = train_classifier(TEXTS, Y, ["math", "history", "code"])
    b = train_classifier(list(TEXTS), Y.copy(), ["math", "history", "code"])
    assert a.featuriser.vocab == b.featuriser.vocab
    assert np.array_equal(a.coef, b.coef) and np.array_equal(a.intercept, b.intercept)
    p = a.proba(["Compute 10 plus 1", "Which king ruled France?", "python please"])
    assert np.allclose(p.sum(axis=1), 1.0) and p.argmax(axis=1).tolist() == [0, 1, 2]
    sharper = a.proba(["Compute 10 plus 1"], temperature=0.5)
    assert sharper[0, 0] > p[0, 0]


def test_merging_identical_training_rows_fits_the_same_classifier():
    texts = [f"{t} ref{i}x{j}" for i in range(5) for j, t in enumerate(TEXTS)]  # each ref is seen once: no feature
    y = np.tile(Y, (5, 1))
    y[0] = [0.5, 0.5, 0.0]  # merged rows average their soft labels
    merged = train_classifier(texts, y, ["math", "history", "code"])
    plain = train_classifier(texts, y, ["math", "history", "code"], merge=False)
    x = merged.featuriser.matrix(texts)
    assert x.shape[0] == 30 and len({x[[r]].toarray().tobytes() for r in range(30)}) == 6  # 5x fewer rows
    assert merged.featuriser.vocab == plain.featuriser.vocab
    assert np.allclose(merged.coef, plain.coef, rtol=1e-6, atol=1e-9)
    assert np.allclose(merged.intercept, plain.intercept, rtol=1e-6, atol=1e-9)
    probe = ["Compute 10 plus 1", "Which king ruled France?", "python please", *texts]
    assert np.allclose(merged.proba(probe), plain.proba(probe), atol=1e-9)


def test_rows_that_are_mostly_distinct_are_not_merged():
    from skillorchestra_core.routing.classifier import merge_duplicates

    x = Featuriser.fit(TEXTS, min_df=1).matrix(TEXTS + TEXTS[:1])
    same, y, count = merge_duplicates(x, np.eye(7))
    assert same is x and count is None
    merged, mean, count = merge_duplicates(x, np.eye(7), worth=1.0)
    assert merged.shape[0] == 6 and count.ravel().tolist() == [2, 1, 1, 1, 1, 1]
    assert mean[0].tolist() == [0.5, 0, 0, 0, 0, 0, 0.5]


def test_featuriser_ignores_unknown_words_and_marks_shape():
    f = Featuriser.fit(TEXTS, min_df=1)
    m = f.matrix(["zzz qqq", "Compute 3"])
    assert f.known_words(m).tolist() == [False, True]
    assert np.allclose(np.sqrt(m.multiply(m).sum(axis=1)).A.ravel(), 1.0)  # rows are unit length
    assert {"#first:who", "#upper", "#lower", "#last:?", "#Cap"} <= set(f.vocab)


def test_temperature_and_keep_rule():
    logits = np.array([[4.0, 0.0], [0.0, 4.0], [1.0, 0.0]])
    y = np.array([[1.0, 0.0], [0.0, 1.0], [0.0, 1.0]])  # one confident mistake: a softer temperature fits better
    assert fit_temperature(logits, y) > 1.0
    p = np.array([[0.6, 0.3, 0.1], [0.2, 0.2, 0.6]])
    assert np.allclose(keep_weights(p, 1, 1.0), [[1, 0, 0], [0, 0, 1]])
    assert np.allclose(keep_weights(p, 3, 0.8), [[2 / 3, 1 / 3, 0], [0.25, 0.0, 0.75]])  # stable ties: first wins
    assert np.allclose(keep_weights(p, 3, 1.0), p)


def test_settings_are_chosen_on_val_and_travel_in_the_snapshot(db_url):
    qa, _ = routing_models(db_url)
    settings = settle_activation(qa)["answer"]
    assert settings["chosen_on"].startswith("val (6 queries") and settings["n_val"] == 6
    assert settings["top_k"] in (1, 2, 3) and settings["temperature"] > 0
    snap = json.loads(json.dumps(to_snapshot(qa, include_queries=False)))
    assert "val_queries" not in snap and "skill_queries" not in snap
    assert snap["settings"]["activation"]["answer"] == settings
    again = from_snapshot(snap)  # the trained classifier travels too: no query text needed, no retraining
    assert again.skill_queries == [] and activator(again, "answer").settings == activator(qa, "answer").settings
    assert np.array_equal(activator(again, "answer").classifier.coef, activator(qa, "answer").classifier.coef)
    texts = ["Which emperor ruled Rome in the year 300?", "Write a python function that sorts", "zzyzx"]
    a, b = activate_batch(qa, "answer", texts), activate_batch(again, "answer", texts)
    assert np.array_equal(a.weights, b.weights) and a.known.tolist() == [True, True, False]
    retrained = from_snapshot({k: v for k, v in to_snapshot(qa).items() if k != "activation_models"})
    assert np.allclose(activate_batch(retrained, "answer", texts).weights, a.weights)  # deterministic retraining


def test_batch_and_single_activation_agree(db_url):
    qa, _ = routing_models(db_url)
    texts = ["Which emperor ruled Rome in the year 300?", "Compute 4 plus 9 times seven", "Fix the python bug"]
    batch = activate_batch(qa, "answer", texts)
    for row, text in enumerate(texts):
        single = activate(qa, "answer", text, method="offline")
        got = {a.skill: a.weight for a in single.skills}
        want = {k: w for k, w in zip(batch.skills, batch.weights[row]) if w > 0}
        assert got.keys() == want.keys() and all(got[k] == pytest.approx(want[k]) for k in got)
        assert all(a.probability is not None for a in single.skills)


@pytest.fixture(scope="module")
def llmrouter_url(tmp_path_factory):
    if not (SHARED_LLMROUTER / "dcrouter_train.json").exists():
        pytest.skip(f"LLMRouter outcome set not found at {SHARED_LLMROUTER} (it lives in ../shared/data/llmrouter)")
    from skillorchestra_core.formats.llmrouter import import_llmrouter

    url = f"sqlite:///{tmp_path_factory.mktemp('llmrouter') / 'lr.db'}"
    with session(url) as s:
        import_llmrouter(s, SHARED_LLMROUTER, "llmrouter")
        s.commit()
    return url


def test_activation_finds_the_task_of_llmrouter_test_queries_by_text(llmrouter_url):
    from skillorchestra_core.routing.build import routing_model

    with session(llmrouter_url) as s:
        model = routing_model(s, "llmrouter")
        test = s.exec(select(Query.id, Query.text).where(Query.split == "test").order_by(Query.id)).all()
        attributed = {q: k for (q, _, k) in load_version(s, "llmrouter").content.attributions}
    assert all(m == "answer" and len(w) == 1 for _, m, w in model.skill_queries)  # train labels only
    act = activate_batch(model, "answer", [t for _, t in test])
    top = np.array(act.skills)[act.weights.argmax(axis=1)]
    accuracy = float(np.mean([k == attributed[q] for k, (q, _) in zip(top, test)]))
    assert accuracy >= 0.80, accuracy
    assert act.source == "offline:classifier" and np.allclose(act.weights.sum(axis=1), 1.0)
    assert model.settings["activation"]["answer"]["n_val"] > 500


def test_without_labelled_queries_profile_similarity_decides(db_url):
    qa, _ = routing_models(db_url)
    snap = to_snapshot(qa, include_queries=False)
    bare = from_snapshot({k: v for k, v in snap.items() if k != "activation_models"})  # no labels, no classifier
    assert activator(bare, "answer") is None
    act = activate(bare, "answer", "Write a python function that reverses a list", method="offline")
    assert act.source == "offline:tfidf" and act.skills[0].skill == "answer.coding"
    assert all(a.similarity > 0 and a.probability is None and a.source == "profile" for a in act.skills)
    batch = activate_batch(bare, "answer", ["Write a python function that reverses a list", "zzyzx"], top_k=1)
    assert batch.weights.tolist()[1] == [0.0] * len(batch.skills) and batch.weights[0].max() == 1.0


def test_labelled_targets_are_the_dense_rows_normalised_bit_for_bit():
    """The triplet-built targets equal the former dense construction (row sums in numpy's order) exactly."""
    from skillorchestra_core.routing.learned_activation import _labelled

    rng = np.random.default_rng(3)
    leaves = [f"s{j}" for j in range(40)]
    pos = {k: j for j, k in enumerate(leaves)}
    queries = []
    for i in range(300):
        picked = rng.choice(40, size=int(rng.integers(0, 7)), replace=False)
        weights = {leaves[j]: float(rng.random()) for j in picked}
        if i % 11 == 0:
            weights["not.a.leaf"] = 0.5  # ignored
        queries.append((f"text {i}", "answer" if i % 5 else "other", weights))
    texts, targets = _labelled(queries, "answer", pos)
    dense = np.zeros((sum(m == "answer" for _, m, _ in queries), len(leaves)))
    names = [t for t, m, _ in queries if m == "answer"]
    for r, (_, m, weights) in enumerate(q for q in queries if q[1] == "answer"):
        for k, w in weights.items():
            if k in pos:
                dense[r, pos[k]] = w
    some = dense.sum(axis=1) > 0
    assert texts == [t for t, ok in zip(names, some) if ok]
    assert np.array_equal(targets, dense[some] / dense.sum(axis=1)[some, None])
    assert any(len(w) > 2 for _, _, w in queries)  # the dense-row path is exercised too
