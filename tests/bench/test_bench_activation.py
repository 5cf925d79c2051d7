"""Router quality and activation speed on the real LLMRouter set (../shared/data/llmrouter), test split by text only.

Prints: classifier training time (and that a second training is identical), activation top-1 accuracy on the test
split, batch routing throughput with activation included (queries/s; best of 5) against one-by-one activation in the
same run, and the held-out evaluation table (router x lambda: accuracy / mean cost in micro-dollars). No timed or
quality assertions: the figures are printed.
"""

from __future__ import annotations

import time

import numpy as np
import pytest
from sqlmodel import select

from skillorchestra_core.db import session
from skillorchestra_core.db.models import Query
from skillorchestra_core.handbook.store import load_version

pytestmark = pytest.mark.bench

LAMBDAS = (0.0, 0.05, 0.08, 0.09, 0.1, 0.2)
ROUTERS = ("skill", "true-label", "reference-rule", "best-single", "cheapest", "random", "oracle")


def _best(fn, repeat: int = 5) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def test_bench_activation_and_evaluation(tmp_path, llmrouter_dir, capsys, bench_report):
    from skillorchestra_core.formats.llmrouter import import_llmrouter
    from skillorchestra_core.routing.activation import activate, activate_batch, activator
    from skillorchestra_core.routing.batch import batch_choose, pad_activations, route_batch
    from skillorchestra_core.routing.build import routing_model
    from skillorchestra_core.routing.classifier import train_classifier
    from skillorchestra_core.routing.evaluate import evaluate

    url = f"sqlite:///{tmp_path / 'lr.db'}"
    with session(url) as s:
        import_llmrouter(s, llmrouter_dir, "llmrouter")
        s.commit()
        model = routing_model(s, "llmrouter")
        test = s.exec(select(Query.id, Query.text).where(Query.split == "test").order_by(Query.id)).all()
        attributed = {q: k for (q, _, k) in load_version(s, "llmrouter").content.attributions}
    texts = [t for _, t in test]
    table = model.table("answer")

    t0 = time.perf_counter()
    act = activator(model, "answer")  # trains the classifier and chooses its settings on val
    first = time.perf_counter() - t0
    labelled = [(t, w) for t, _, w in model.skill_queries]
    y = np.array([[w.get(k, 0.0) for k in act.classifier.skills] for _, w in labelled])
    t0 = time.perf_counter()
    again = train_classifier([t for t, _ in labelled], y, act.classifier.skills)
    retrain = time.perf_counter() - t0
    same = np.array_equal(again.coef, act.classifier.coef)

    batch = activate_batch(model, "answer", texts)
    top = np.array(batch.skills)[batch.weights.argmax(axis=1)]
    top1 = float(np.mean([k == attributed[q] for k, (q, _) in zip(top, test)]))

    t_batch = _best(lambda: route_batch(model, texts, lam=0.1))

    def one_by_one():
        acts = [[(a.skill, a.weight) for a in activate(model, "answer", q, method="offline").skills] for q in texts]
        batch_choose(table, *pad_activations(table, acts), 0.1)

    t_single = _best(one_by_one, repeat=2)

    with session(url) as s:
        t0 = time.perf_counter()
        results = evaluate(s, "llmrouter", split="test", routers=ROUTERS, lambdas=LAMBDAS)
        t_eval = time.perf_counter() - t0

    bench_report("Batch routing with activation (LLMRouter test split)", len(texts) / t_batch, "queries/s",
                 target=">= 20,000/s", met=len(texts) / t_batch >= 20_000, baseline=len(texts) / t_single,
                 baseline_label="one-by-one activation", higher_is_better=True)
    bench_report("Activation top-1 on the LLMRouter test split (by text)", top1, "share", target=">= 0.80",
                 met=top1 >= 0.80)
    bench_report(f"Held-out evaluation, {len(ROUTERS)} routers x {len(LAMBDAS)} lambdas", t_eval, "s")
    with capsys.disabled():
        print(f"\n[activation] {len(model.skill_queries)} train queries, {len(act.skills)} skills: first training + "
              f"val choice {first:.2f} s, retraining {retrain:.2f} s, identical: {same}; settings "
              f"{model.settings['activation']['answer']}")
        print(f"[activation] top-1 on the test split ({len(texts)} queries, by text): {top1:.3f}")
        print(f"[batch routing, activation included] {len(texts) / t_batch:,.0f} queries/s; one-by-one activation "
              f"{len(texts) / t_single:,.0f} queries/s; ratio {t_single / t_batch:.1f}x")
        print(f"[evaluate] {len(ROUTERS)} routers x {len(LAMBDAS)} lambdas in {t_eval:.2f} s "
              f"(C_ref {results[0].cost_ref * 1e6:.1f} u$, {results[0].cost_ref_agent})")
        print(f"{'router':<16}" + "".join(f"{'lambda ' + format(x, 'g'):>16}" for x in LAMBDAS))
        for name in ROUTERS:
            rows = [r for r in results if r.router == name]
            print(f"{name:<16}" + "".join(f"{r.accuracy:>9.3f} /{r.mean_cost_usd * 1e6:>5.0f}" for r in rows))
