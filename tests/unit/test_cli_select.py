"""CLI select / publish / report: the JSON contract, the published configuration, the report files."""

import json
import re

import pytest
from typer.testing import CliRunner

from skillorchestra_core.cli import app
from skillorchestra_core.db import session
from skillorchestra_core.formats.llmrouter import import_llmrouter
from skillorchestra_core.routing.api import HandbookRouter

runner = CliRunner()


def _select(db_url, name, *extra):
    result = runner.invoke(app, ["--db", db_url, "select", name, "--split", "val", "--lambdas", "0,0.1,0.3",
                                 "--json", *extra])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def test_select_json_contract_and_publish(demo_db_url):
    out = _select(demo_db_url, "demo-qa", "--candidates", "auto")
    assert {"runs", "frontier", "selected"} <= set(out)
    for run in out["runs"]:
        assert {"router", "version", "lambda", "accuracy", "mean_cost_usd"} <= set(run)
    routers = {r["router"] for r in out["runs"]}
    assert {"skill", "best-single", "cheapest", "random", "oracle", "reference-rule"} <= routers
    assert sum(r.startswith("single:") for r in routers) == 6
    ids = {r["id"] for r in out["runs"]}
    assert {r["id"] for r in out["frontier"]} <= ids and out["selected"]["id"] in ids
    pool = [r for r in out["runs"] if r["router"] not in ("oracle", "true-label")]

    def dominated(r):
        return any(o["mean_cost_usd"] <= r["mean_cost_usd"] and o["accuracy"] >= r["accuracy"] and
                   (o["mean_cost_usd"] < r["mean_cost_usd"] or o["accuracy"] > r["accuracy"]) for o in pool)
    assert {r["id"] for r in out["frontier"]} == {r["id"] for r in pool if not dominated(r)}
    again = _select(demo_db_url, "demo-qa", "--candidates", "auto")
    assert {r["id"] for r in again["runs"]} == ids  # identical runs are found, not stored twice
    sel = out["selected"]
    pub = runner.invoke(app, ["--db", demo_db_url, "publish", "demo-qa", "--version", str(sel["version"]),
                              "--lambda", str(sel["lambda"]), "--json"])
    assert pub.exit_code == 0, pub.output
    router = HandbookRouter.from_database("demo-qa", db_url=demo_db_url)
    assert (router.model.version, router.defaults.lam) == (sel["version"], pytest.approx(sel["lambda"]))


def test_bad_input_is_one_line(demo_db_url):
    bad = runner.invoke(app, ["--db", demo_db_url, "select", "demo-qa", "--lambdas", "0,x"])
    assert bad.exit_code != 0 and "--lambdas expects comma-separated numbers" in str(bad.exception or bad.output)
    neg = runner.invoke(app, ["--db", demo_db_url, "publish", "demo-qa", "--version", "1", "--lambda", "-1"])
    assert neg.exit_code != 0


def test_report_writes_table_and_plot(demo_db_url, tmp_path):
    result = runner.invoke(app, ["--db", demo_db_url, "report", "demo-qa", "-o", str(tmp_path / "r"),
                                 "--lambdas", "0,0.2,0.5"])
    assert result.exit_code == 0, result.output
    names = {p.name for p in (tmp_path / "r").iterdir()}
    assert {"report.csv", "report.md", "pareto.html"} <= names
    assert ("pareto.png" in names) == ("wrote" in result.output.splitlines()[-1])
    md = (tmp_path / "r" / "report.md").read_text()
    assert "| skill |" in md and "| oracle |" in md and "| best-single |" in md
    html = (tmp_path / "r" / "pareto.html").read_text()
    assert re.search(r"<script[^>]*\bsrc=", html) is None  # plotly.js inline: the file opens offline
    assert html.count("plotly-graph-div") >= 2


def test_llmrouter_selection_beats_the_cheapest_and_costs_less_than_best_single(db_url, llmrouter_dir):
    with session(db_url) as s:
        import_llmrouter(s, llmrouter_dir, "llmrouter")
        s.commit()
    out = _select(db_url, "llmrouter", "--candidates", "none", "--objective-lambda", "0.1")
    runs = {r["router"]: r for r in out["runs"] if r["router"] in ("cheapest", "best-single", "oracle")}
    sel = out["selected"]
    assert runs["cheapest"]["accuracy"] < sel["accuracy"] < runs["oracle"]["accuracy"]
    assert sel["mean_cost_usd"] < runs["best-single"]["mean_cost_usd"]
