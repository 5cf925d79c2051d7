"""Shared value parsers, the hash split and the bad-row messages."""

from __future__ import annotations

import hashlib
import math

import pytest

from skillorchestra_core.errors import BadRow, ImportRejected
from skillorchestra_core.formats.rows import (
    RowIssue,
    RowsRejected,
    as_bool,
    as_nonneg_int,
    as_split,
    as_text,
    as_unit,
    describe,
    hash_split,
    settle,
)


@pytest.mark.parametrize("value", [True, "yes", "Y", "1", 1, 1.0, "TRUE", " t "])
def test_true_values(value):
    assert as_bool(value) is True


@pytest.mark.parametrize("value", [False, "no", "0", 0, "false", "F"])
def test_false_values(value):
    assert as_bool(value) is False


@pytest.mark.parametrize("value", ["maybe", 2, 0.5, None, ""])
def test_not_bools(value):
    with pytest.raises(ValueError, match="must be true/false"):
        as_bool(value)


@pytest.mark.parametrize(("value", "message"), [("1.5", "outside"), (-0.01, "outside"), ("nan", "finite"),
                                               ("x", "must be a number"), (True, "must be a number")])
def test_bad_scores(value, message):
    with pytest.raises(ValueError, match=message):
        as_unit(value)


def test_numbers_and_text():
    assert as_unit("0.25") == 0.25 and as_nonneg_int("12.0", "t") == 12 and as_text(7.0, "id") == "7"
    with pytest.raises(ValueError, match="whole number"):
        as_nonneg_int("1.5", "prompt_tokens")
    assert as_split("Validation") == "val" and as_split("dev") == "val"
    with pytest.raises(ValueError, match="unknown split 'holdout'"):
        as_split("holdout")


def test_hash_split_rule_and_proportions():
    text = "any question"
    bucket = int(hashlib.sha256(text.encode()).hexdigest()[:8], 16) % 100
    assert hash_split(text) == ("train" if bucket < 70 else "val" if bucket < 80 else "test")
    splits = [hash_split(f"question number {i}") for i in range(20_000)]
    for name, share in (("train", 0.7), ("val", 0.1), ("test", 0.2)):
        assert math.isclose(splits.count(name) / len(splits), share, abs_tol=0.015)


def test_messages_name_file_and_unit():
    issues = [RowIssue(3, "bad score", unit="row"), RowIssue(1, "x", unit="record", file="a.json")]
    err = RowsRejected("f.parquet", issues)
    assert isinstance(err, ImportRejected)
    assert str(err) == "2 bad row(s), nothing imported: f.parquet row 3: bad score; a.json record 1: x"
    assert describe(BadRow(4, "why"), "f.csv") == "f.csv:4: why"
    with pytest.raises(RowsRejected, match="f.csv:2: late; f.csv:9: later"):
        settle("f.csv", [RowIssue(9, "later"), RowIssue(2, "late")], skip_bad_rows=False)
    assert [b.line for b in settle("f.csv", [RowIssue(9, "a"), RowIssue(2, "b")], skip_bad_rows=True)] == [2, 9]
