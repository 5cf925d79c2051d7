import pandas as pd
import pytest

from skillorchestra_core.errors import StudioError
from skillorchestra_core.handbook.content import HandbookContent, ImportedCounts, SkillSpec, validate_content
from skillorchestra_core.handbook.edits import merge_skills, split_skill
from skillorchestra_core.learning.competence import PriorConfig, competence_table

OUTCOMES = pd.DataFrame({"query_id": [1, 2, 3, 4], "agent": ["a"] * 4, "mode": ["m"] * 4,
                         "score": [1.0, 0.0, 1.0, 1.0]})


def content():
    c = HandbookContent()
    c.add_mode("m")
    for key in ("x", "y"):
        c.skills[key] = SkillSpec(key, "m")
    c.attributions = {(1, "m", "x"): (1.0, "label"), (2, "m", "x"): (1.0, "label"),
                      (3, "m", "y"): (0.5, "label"), (3, "m", "x"): (0.5, "label"), (4, "m", "y"): (1.0, "label")}
    return c


def table(c):
    skills = pd.DataFrame([(k.key, k.mode, k.parent_key) for k in c.skills.values()],
                          columns=["skill", "mode", "parent"])
    att = pd.DataFrame([(q, m, k, w) for (q, m, k), (w, _) in c.attributions.items()],
                       columns=["query_id", "mode", "skill", "weight"])
    return competence_table(OUTCOMES, att, skills, pd.DataFrame({"agent": ["a"], "mode": ["m"]}),
                            prior=PriorConfig("flat")).set_index("skill")


def test_merge_sums_evidence_of_both_skills():
    before = table(content())
    merged = merge_skills(content(), "x", "y", SkillSpec("xy", "m", name="XY"))
    assert validate_content(merged) == []
    after = table(merged)
    assert set(after.index) == {"xy"}
    assert after.loc["xy", "n"] == before.loc["x", "n"] + before.loc["y", "n"] == 4
    assert after.loc["xy", "S"] == before.loc["x", "S"] + before.loc["y", "S"]
    assert merged.attributions[(3, "m", "xy")][0] == 1.0  # the two halves of query 3 joined


def test_merge_sums_imported_counts_instead_of_averaging():
    c = content()
    c.imported = {("a", "m", "x"): ImportedCounts("a", "m", "x", 5, 2),
                  ("a", "m", "y"): ImportedCounts("a", "m", "y", 3, 4)}
    merged = merge_skills(c, "x", "y", SkillSpec("xy", "m"))
    counts = merged.imported[("a", "m", "xy")]
    assert (counts.alpha, counts.beta) == (1 + 4 + 2, 1 + 1 + 3)


def test_split_reattributes_parent_evidence_without_double_counting():
    c = content()
    children = [SkillSpec("x.one", "m"), SkillSpec("x.two", "m")]
    out = split_skill(c, "x", children, {1: "x.one", 2: "x.two", 3: "x.two"})
    assert validate_content(out) == []
    t = table(out)
    assert t.loc["x.one", "n"] == 1 and t.loc["x.two", "n"] == 1.5
    assert t.loc["x", "n"] == table(c).loc["x", "n"]  # the parent still summarises the same evidence
    assert out.skills["x.one"].parent_key == "x"


def test_edits_reject_bad_requests():
    with pytest.raises(StudioError):
        merge_skills(content(), "x", "nope", SkillSpec("z", "m"))
    with pytest.raises(StudioError, match="at least two"):
        split_skill(content(), "x", [SkillSpec("x.one", "m")], {})
    with pytest.raises(StudioError, match="unknown child"):
        split_skill(content(), "x", [SkillSpec("x.a", "m"), SkillSpec("x.b", "m")], {1: "x.c"})
