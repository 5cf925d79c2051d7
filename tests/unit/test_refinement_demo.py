"""The detectors on the synthetic demo find its planted structure (train evidence only)."""

import math

from skillorchestra_core.db import session
from skillorchestra_core.handbook.store import load_version
from skillorchestra_core.refinement.run import detect_version

SPLIT = ["answer.math.word_problems"]
MERGE = ["answer.entities.capitals", "answer.entities.currencies"]


def test_demo_planted_split_and_merge_are_found(demo_db_url):
    with session(demo_db_url) as s:
        found = detect_version(s, load_version(s, "demo-qa"))
        ref = detect_version(s, load_version(s, "demo-qa"), detector="reference")
    splits = [c for c in found.candidates if c.kind == "split"]
    merges = [c for c in found.candidates if c.kind == "merge"]
    assert [c.skills for c in splits] == [SPLIT]  # the only split, far above ln 10
    assert splits[0].statistic > 10 * math.log(10)
    terms = [set(g.terms) for g in splits[0].groups]
    assert any({"percent", "interest"} <= t for t in terms) and any({"area"} <= t for t in terms)
    assert MERGE in [c.skills for c in merges]
    assert all(c.statistic > math.log(10) for c in merges)
    # The reference rules find neither: a mixture's rates average out, and equal true rates are not equal samples.
    assert SPLIT not in [c.skills for c in ref.candidates] and MERGE not in [c.skills for c in ref.candidates]
