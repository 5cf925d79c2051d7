"""Nothing learned reads val or test outcomes or text: flipping every test outcome changes no learned number."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pandas as pd
from sqlmodel import select

from skillorchestra_core.db import session
from skillorchestra_core.db.models import Query
from skillorchestra_core.demo import SEED, qa
from skillorchestra_core.formats.export import export_document
from skillorchestra_core.handbook.store import load_version
from skillorchestra_core.learning import profile
from skillorchestra_core.routing.batch import route_batch
from skillorchestra_core.routing.build import routing_model


def _flip_test(rows):
    """Every test-split outcome reversed and its cost tenfold: what a leak would learn from."""
    return [dataclasses.replace(r, score=1.0 - r.score, cost_usd=r.cost_usd * 10,
                                completion_tokens=r.completion_tokens * 3) if r.split == "test" else r
            for r in rows]


def _learned(url: str, name: str):
    with session(url) as s:
        v = load_version(s, name)
        frames = profile.load_frames(s, v)
        comp = profile.competence(frames)
        costs = profile.costs(frames)
        examples = {k: list(sp.examples) for k, sp in sorted(v.content.skills.items())}
        model = routing_model(s, name)
        texts = list(s.exec(select(Query.text).where(Query.handbook_id == v.handbook_id, Query.split == "test")
                            .order_by(Query.ext_id)))
        export = export_document(s, name, "skillorchestra")[0]
    choices = {lam: route_batch(model, texts, lam=lam, cost_scope="skill").agents for lam in (0.0, 0.1, 0.5)}
    return comp, costs, examples, model, choices, export, frames


def test_flipped_test_outcomes_change_nothing_learned(db_url):
    with session(db_url) as s:
        qa.build(s, SEED, name="clean")
        qa.build(s, SEED, name="flipped", edit_rows=_flip_test)
        s.commit()
    clean, flipped = _learned(db_url, "clean"), _learned(db_url, "flipped")
    # the flipped handbook really holds different test evidence ...
    ev_c, ev_f = clean[6].evidence, flipped[6].evidence
    test_c, test_f = ev_c.loc[ev_c.split == "test", "score"], ev_f.loc[ev_f.split == "test", "score"]
    assert (test_c.to_numpy() != test_f.to_numpy()).all()
    # ... and learns exactly the same numbers
    pd.testing.assert_frame_equal(clean[0], flipped[0], check_exact=True)
    pd.testing.assert_frame_equal(clean[1], flipped[1], check_exact=True)
    assert clean[2] == flipped[2]
    for mode in clean[3].modes:
        a, b = clean[3].table(mode), flipped[3].table(mode)
        for field in ("mean", "ci_low", "ci_high", "cost", "general", "overall_rate", "train_rate", "cost_n",
                      "skill_cost", "skill_cost_n"):
            np.testing.assert_array_equal(getattr(a, field), getattr(b, field), err_msg=field)
        # the per-skill costs are learned numbers (not the mode cost copied), so the comparison has teeth
        assert (a.skill_cost_n > 0).any() and not np.allclose(a.skill_cost, a.cost[:, None])
    assert clean[3].skill_queries == flipped[3].skill_queries
    assert clean[4] == flipped[4]
    assert clean[5]["agent_profiles"] == flipped[5]["agent_profiles"]
    assert clean[5]["skills"] == flipped[5]["skills"]


def test_skill_examples_and_exports_carry_no_held_out_text(demo_db_url):
    with session(demo_db_url) as s:
        v = load_version(s, "demo-qa")
        frames = profile.load_frames(s, v)
        held_out = set(s.exec(select(Query.text).where(Query.handbook_id == v.handbook_id, Query.split != "train")))
        docs = [export_document(s, "demo-qa", fmt)[0] for fmt in ("skillorchestra", "rsl", "stage-router", "json")]
    examples = [e for k in v.content.skills.values() for e in k.examples]
    assert examples and not set(examples) & held_out
    dumped = "\n".join(json.dumps(d) for d in docs)
    assert not [t for t in held_out if t in dumped]
    assert frames.learned_from.startswith("learned from ") and "train" in frames.learned_from


def test_learn_splits_are_stored_with_the_version_and_hashed():
    from skillorchestra_core.handbook.content import HandbookContent, validate_content

    a, b = HandbookContent(), HandbookContent(learn_splits=("train", "val"))
    assert a.content_hash() != b.content_hash()
    assert validate_content(HandbookContent(learn_splits=("train", "holdout")))
