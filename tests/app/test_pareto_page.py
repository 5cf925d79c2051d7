"""AppTest of the Pareto page: runs, frontier, baselines, bands, the objective's selection, a click, publishing."""

import json

import pytest

from skillorchestra_core.db import session
from skillorchestra_core.selection.publish import published
from skillorchestra_core.selection.service import select
from skillorchestra_core.selection.sweep import SweepOptions

PAGE = "pages/pareto.py"


@pytest.fixture
def swept(app_db):
    with session(app_db) as s:
        sel = select(s, "demo-qa", SweepOptions(lambdas=(0.0, 0.1, 0.3, 0.6)))
        s.commit()
    return sel


def _figure(at):
    return json.loads(at.get("plotly_chart")[0].proto.spec)


def test_the_figure_has_frontier_baselines_bands_and_selection(swept, open_at):
    at = open_at("demo-qa")
    assert not at.exception
    assert at.title[0].value == "Pareto"
    names = [t["name"] for t in _figure(at)["data"]]
    assert {"frontier", "baselines", "dominated runs", "bootstrap band (95%)"} <= set(names)
    assert any(n.startswith("selected at") for n in names)
    front = next(t for t in _figure(at)["data"] if t["name"] == "frontier")
    assert len(front["x"]) == len({r.id for r in swept.frontier})
    base = next(t for t in _figure(at)["data"] if t["name"] == "baselines")
    assert "oracle" in base["text"] and "best-single" in base["text"]


def test_the_lambda_slider_changes_the_selection(swept, open_at):
    cheap = open_at("demo-qa", **{"pareto:lambda": 1.0})
    rich = open_at("demo-qa", **{"pareto:lambda": 0.0})
    sel = [next(t for t in _figure(at)["data"] if t["name"].startswith("selected")) for at in (cheap, rich)]
    assert sel[0]["x"][0] <= sel[1]["x"][0] and sel[0]["y"][0] <= sel[1]["y"][0]
    assert sel[0]["x"] != sel[1]["x"]


def test_clicking_a_point_shows_its_breakdown_and_publishing_records_it(swept, open_at, app_db):
    at = open_at("demo-qa")
    run = next(r for r in swept.runs if r.router == "skill" and r.lam == 0.3 and r.n_skills > 0)
    at.session_state["pareto:chart"] = {"selection": {"points": [{"curve_number": 3, "point_number": 0,
                                                                  "point_index": 0, "customdata": [run.id]}],
                                                      "point_indices": [0], "box": [], "lasso": []}}
    at.run()
    assert not at.exception
    assert at.subheader[0].value == run.label
    agents = at.dataframe[0].value
    assert agents["calls"].sum() == run.n_queries
    assert {"skill", "queries", "accuracy"} <= set(at.dataframe[1].value.columns)
    at.button(key="pareto:publish").click().run()
    assert not at.exception
    with session(app_db) as s:
        pub = published(s, "demo-qa")
    assert (pub.version, pub.lam, pub.run_id) == (run.version, run.lam, run.id)
    assert any("Published" in m.value for m in at.success)


def test_a_handbook_without_runs_offers_the_sweep_and_runs_it(app_db, open_at):
    at = open_at("demo-qa")
    assert not at.exception and not at.get("plotly_chart")
    at.button(key="pareto:sweep").click().run(timeout=240)
    assert not at.exception
    names = [t["name"] for t in _figure(at)["data"]]
    assert "frontier" in names and "baselines" in names


def test_a_killed_live_run_is_listed_as_interrupted(swept, open_at, app_db):
    import subprocess

    from skillorchestra_core.db.selection_tables import ValidationRun
    from skillorchestra_core.selection.live import plan_live_run

    with session(app_db) as s:
        run_id = plan_live_run(s, "demo-qa", swept.source_version, 0.1)
        s.commit()
    at = open_at("demo-qa")
    table = _live_table(at)
    assert list(zip(table["id"], table["status"])) == [(run_id, "running")]  # its planner (this process) lives
    dead = subprocess.Popen(["true"])
    dead.wait()
    with session(app_db) as s:
        run = s.get(ValidationRun, run_id)
        run.owner_pid = dead.pid  # the process executing it was killed
        s.add(run)
        s.commit()
    at = open_at("demo-qa")
    assert not at.exception
    table = _live_table(at)
    assert list(zip(table["id"], table["status"], table["answered"])) == [(run_id, "interrupted", 0)]
    assert any("--resume" in c.value for c in at.caption)


def _live_table(at):
    assert not at.exception and any(h.value == "Live runs" for h in at.subheader)
    return next(d.value for d in at.dataframe if "answered" in d.value.columns)
