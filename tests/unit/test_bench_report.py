"""The benchmark report table: rows merged by figure name, ratios oriented so that above 1 means better."""

from __future__ import annotations

import pytest
from support.bench_report import BenchReport, read_rows


def test_ratio_is_how_many_times_better_than_the_baseline():
    r = BenchReport()
    r("build", 2.0, "s", target="< 5 s", met=True, baseline=8.0)
    r("batch", 30_000, "queries/s", target=">= 20,000", met=True, baseline=600, higher_is_better=True)
    assert r.rows["build"].ratio() == pytest.approx(4.0)
    assert r.rows["batch"].ratio() == pytest.approx(50.0)
    assert r.rows["build"].cells()[:6] == ("build", "2 s", "< 5 s", "yes", "8 s", "4.00x")


def test_a_partial_run_replaces_only_its_rows(tmp_path):
    path = tmp_path / "BENCHMARKS.md"
    first = BenchReport()
    first("a", 1.0, "s", target="< 2 s", met=True)
    first("b", 3.0, "s", target="< 2 s", met=False)
    first.write(path, "a note")
    path.write_text(path.read_text().replace("# Benchmarks", "# Benchmarks (edited heading)"))
    second = BenchReport()
    second("b", 1.5, "s", target="< 2 s", met=True, baseline=3.0, baseline_label="old | path")
    second("c", 7.0, "x")
    second.write(path)
    text = path.read_text()
    rows = read_rows(text)
    assert list(rows) == ["a", "b", "c"]
    assert rows["a"][1:4] == ("1 s", "< 2 s", "yes")
    assert rows["b"][1:6] == ("1.5 s", "< 2 s", "yes", "3 s (old / path)", "2.00x")
    assert rows["c"][3] == "" and rows["c"][5] == ""
    assert "(edited heading)" in text and "a note" in text  # the text around the table is kept
    assert not (tmp_path / "BENCHMARKS.md.tmp").exists()


@pytest.mark.parametrize("name, value", [("", 1.0), ("x", float("nan")), ("x", float("inf"))])
def test_a_bad_figure_is_refused(name, value):
    with pytest.raises(ValueError, match="benchmark figure"):
        BenchReport()(name, value, "s")


def test_a_missed_target_says_why_and_every_row_says_how_busy_the_machine_was():
    r = BenchReport()
    r("slow", 9.0, "s", target="< 5 s", met=False, why="reading evidence dominates")
    r("fast", 1.0, "s", target="< 5 s", met=True, why="ignored when met")
    assert r.rows["slow"].cells()[3] == "**no**: reading evidence dominates"
    assert r.rows["fast"].cells()[3] == "yes"
    assert ", load " in r.rows["slow"].cells()[6]
