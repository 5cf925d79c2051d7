"""Offline discovery on the real LLMRouter outcome set imported WITHOUT task labels: skills found from query text
alone must route the held-out test queries (by their text) at least as well as the best single model."""

import numpy as np
import pandas as pd
from sqlalchemy import select

from skillorchestra_core.db import session
from skillorchestra_core.db.models import Query
from skillorchestra_core.formats.llmrouter import import_llmrouter
from skillorchestra_core.handbook.store import load_version
from skillorchestra_core.learning import profile
from skillorchestra_core.learning.pipeline import LearnOptions
from skillorchestra_core.learning.run import run_learning
from skillorchestra_core.routing.batch import route_batch
from skillorchestra_core.routing.build import build_routing_model


def _test_accuracy(s, name: str, lam: float = 0.0) -> dict:
    loaded = load_version(s, name)
    frames = profile.load_frames(s, loaded)
    test = frames.evidence[frames.evidence["split"] == "test"]
    ids = sorted(int(q) for q in test["query_id"].unique())
    texts = dict(s.exec(select(Query.id, Query.text).where(Query.id.in_(ids))).all())
    chosen = route_batch(build_routing_model(s, loaded), [texts[q] for q in ids], lam=lam).agents
    score = test.set_index(["query_id", "agent"])["score"]
    grid = test.pivot_table(index="query_id", columns="agent", values="score").loc[ids]
    best = frames.outcomes.groupby("agent")["score"].mean().idxmax()  # best single on train
    return {"routed": float(np.mean([score[(q, a)] for q, a in zip(ids, chosen)])),
            "best_single": float(grid[best].mean()), "oracle": float(grid.max(axis=1).mean()),
            "calls": pd.Series(chosen).value_counts().to_dict()}


def test_offline_discovery_without_labels_routes_at_least_as_well_as_the_best_single_model(db_url, llmrouter_dir):
    with session(db_url) as s:
        import_llmrouter(s, llmrouter_dir, "lr", skills_from_task=False)
        s.commit()
    report = run_learning(db_url, "lr", LearnOptions(task_labels=False))
    assert report.created and report.version == 2
    skills = report.skills_added["answer"]
    assert len(skills) >= 5 and all(k["provenance"]["method"] == "tfidf-kmeans" for k in skills)
    assert report.attributed == {"offline:tfidf-kmeans": 4195}
    with session(db_url) as s:
        got = _test_accuracy(s, "lr")
        stored = load_version(s, "lr").content
    assert not any(k.provenance.get("method") == "task_label" for k in stored.skills.values())
    leaves = sum(1 for k in skills if not any(o["parent"] == k["key"] for o in skills))
    print(f"\nLLMRouter, unlabelled: {len(skills)} skills ({leaves} leaves), test accuracy {got['routed']:.4f} vs "
          f"best single {got['best_single']:.4f}, oracle {got['oracle']:.4f}; calls {got['calls']}")
    assert got["routed"] >= got["best_single"]
    assert len(got["calls"]) > 1
