"""The array-backed evidence index answers exactly as the per-row dictionary it replaced (replay and oracle)."""

import numpy as np
import pandas as pd
import pytest
from sqlalchemy import select
from support.legacy_evidence import per_row_outcomes

from skillorchestra_core.db import session
from skillorchestra_core.db.models import Query
from skillorchestra_core.handbook.store import load_version
from skillorchestra_core.learning import profile
from skillorchestra_core.routing.build import routing_model
from skillorchestra_core.routing.engine import RouteOptions, route
from skillorchestra_core.routing.evidence_index import EvidenceIndex


@pytest.mark.parametrize("name", ["demo-qa", "demo-agents"])
def test_the_index_matches_the_per_row_dictionary_on_the_demo(demo_db_url, name):
    with session(demo_db_url) as s:
        loaded = load_version(s, name)
        frames = profile.load_frames(s, loaded)
        model = routing_model(s, name)
        texts = dict(s.execute(select(Query.text, Query.id).where(Query.handbook_id == loaded.handbook_id)).all())
    expected = per_row_outcomes(frames.evidence, frames.agents)  # every split: replay learns nothing
    ix = model.evidence
    assert len(ix) == len(expected) > 0
    assert dict(ix.outcomes.items()) == expected
    for (qid, mode, agent), value in list(expected.items())[::37]:
        assert ix.outcome(qid, mode, agent) == value
        assert ix.recorded(qid, mode, [agent, "nobody"]) == {agent: value}
    assert ix.outcome(10**9, "answer", "nobody") is None
    some_text, some_id = next(iter(texts.items()))
    assert ix.lookup("  " + some_text.upper() + " ") == some_id


def test_replay_and_oracle_on_the_demo_use_the_recorded_outcomes(demo_db_url):
    with session(demo_db_url) as s:
        loaded = load_version(s, "demo-qa")
        frames = profile.load_frames(s, loaded)
        model = routing_model(s, "demo-qa")
        queries = s.execute(select(Query.id, Query.text).where(Query.handbook_id == loaded.handbook_id)
                            .order_by(Query.id).limit(25)).all()
    expected = per_row_outcomes(frames.evidence, frames.agents)  # every split: replay learns nothing
    for qid, text in queries:
        step = route(model, text, RouteOptions(router="oracle", execute="replay")).steps[0]
        recorded = {a: v for (q, m, a), v in expected.items() if q == qid and m == "answer"}
        best = max(v[0] for v in recorded.values())
        assert recorded[step.chosen][0] == best
        assert (step.execution.score, step.execution.cost_usd) == recorded[step.chosen][:2]


def test_duplicates_keep_imported_evidence_then_the_oldest():
    ix = EvidenceIndex.from_frame(
        query_ids=[1, 2], ext_ids=["a", "b"], texts=["One  Query", "two"],
        qid=[1, 1, 1, 2, 2], mode=["answer"] * 5, agent=["x", "x", "y", "x", "x"],
        score=[0.0, 1.0, 1.0, 0.5, 0.25], cost=[np.nan, 0.1, 0.2, 0.3, 0.4], trajectory=[9, 5, 3, 4, 2],
        preferred=[True, False, True, True, True])
    assert ix.outcome(1, "answer", "x") == (0.0, None, 9)  # imported beats an older live run
    assert ix.outcome(2, "answer", "x") == (0.25, 0.4, 2)  # both imported: the oldest
    assert ix.outcome(1, "answer", "y") == (1.0, 0.2, 3)
    assert ix.outcome(1, "code", "x") is None and ix.outcome(3, "answer", "x") is None
    assert ix.lookup("one query") == 1 and ix.lookup("b") == 2 and ix.refs == {1: "a", 2: "b"}
    smaller = ix.without(1, "answer", "x")
    assert smaller.outcome(1, "answer", "x") is None and len(smaller) == len(ix) - 1
    assert sorted(ix.outcomes) == [(1, "answer", "x"), (1, "answer", "y"), (2, "answer", "x")]


def test_labelled_neighbours_are_unchanged_on_the_demo(demo_db_url):
    """The retriever's train neighbours (query text, mode, skill weights), as the former group-by built them."""
    from skillorchestra_core.routing.build import _skill_queries

    with session(demo_db_url) as s:
        loaded = load_version(s, "demo-agents")
        frames = profile.load_frames(s, loaded)
        queries = pd.read_sql(select(Query.id, Query.ext_id, Query.text, Query.split)
                              .where(Query.handbook_id == loaded.handbook_id), s.connection())
    train = queries[queries["split"] == "train"].set_index("id")["text"]
    a = frames.attributions[frames.attributions["query_id"].isin(train.index)]
    expected = [(str(train[q]), str(m), dict(zip(g["skill"], g["weight"].astype(float))))
                for (q, m), g in a.groupby(["query_id", "mode"], sort=True)]
    assert _skill_queries(queries, frames, ("train",)) == expected and expected


def test_texts_normalised_together_equal_each_normalised_alone():
    from skillorchestra_core.routing.evidence_index import normalise_text, normalise_texts

    texts = ["  Hello   World ", "", " ", "\tTabs\nand\r\nlines\u2003em-space\u00a0nbsp ", "ΟΔΟΣ ΟΔΟΣ", "ΟΔΟΣ",
             "Σ", "aΣ", "İstanbul", "x\u200by", "\x1cfile-sep\x1d", "trailing \u3000", "ß", "AB CD"]
    assert normalise_texts(texts) == [normalise_text(t) for t in texts]
    assert normalise_texts(["a\x00b", " B "]) == ["a\x00b", "b"]  # a NUL inside a text: one by one
    assert normalise_texts([]) == [] and normalise_texts([" "]) == [""]
