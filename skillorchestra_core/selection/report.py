"""The real-data report: select on val, evaluate on test for every router, write a table and the Pareto plot.

For the routers whose choice depends on the candidate and lambda (`skill`, and `true-label`, the skill rule given
the query's attributed skills: the ceiling of activation), the (candidate, lambda) is selected on val by the
objective; the baselines (best-single, cheapest, random, oracle, reference-rule and every single agent) need no
selection. Every row is then measured on test by replay. Files: report.csv, report.md, pareto.html (val and test
figures, plotly.js inline: opens offline) and pareto.png (through kaleido and the system's chromium; when that
cannot run, the reason is returned and no PNG is written).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
from sqlmodel import Session

from skillorchestra_core.selection.candidates import as_candidate
from skillorchestra_core.selection.runs import RunRecord
from skillorchestra_core.selection.service import select, summarise
from skillorchestra_core.selection.sweep import SweepOptions, run_sweep
from skillorchestra_core.selection.view import load_view

SELECTED_ROUTERS = ("skill", "true-label")
COLUMNS = ["router", "version", "candidate", "n_skills", "lambda", "val_accuracy", "val_mean_cost_usd",
           "test_accuracy", "test_mean_cost_usd", "test_cost_vs_best_single", "test_calls"]


def report_rows(s: Session, handbook: str, lambdas, objective_lambda: float | None, candidates: str = "auto"
                ) -> tuple[pd.DataFrame, float, tuple[int | None, int | None]]:
    """(the table, the objective lambda used, the skill router's selected (val run id, test run id))."""
    sel = select(s, handbook, SweepOptions(split="val", lambdas=tuple(lambdas), routers=SELECTED_ROUTERS),
                 candidates=candidates, objective_lambda=objective_lambda)
    val_base = {r.router: r for r in sel.runs if r.baseline}
    source = as_candidate(s, handbook, sel.source_version)
    tests = [r for r in run_sweep(s, handbook, [source], SweepOptions(split="test", lambdas=(0.0,),
                                                                      routers=("skill",))) if r.baseline]
    ref = tests[0].cost_ref if tests else None
    rows, marks = [], {}
    for router in SELECTED_ROUTERS:
        pick = summarise(sel.runs, [], sel.objective_lambda, router)[1]
        if pick is None:
            continue
        test = run_sweep(s, handbook, [as_candidate(s, handbook, pick.version)],
                         SweepOptions(split="test", lambdas=(pick.lam,), routers=(router,), baselines=False))
        rows.append(_row(pick, test[0], ref))
        marks[router] = (pick.id, test[0].id)
    rows += [_row(val_base.get(t.router), t, ref) for t in tests]
    return pd.DataFrame(rows, columns=COLUMNS), sel.objective_lambda, marks.get("skill", (None, None))


def _row(val: RunRecord | None, test: RunRecord, ref: float | None) -> list:
    return [test.router, test.version, test.candidate or "-", test.n_skills, test.lam,
            None if val is None else val.accuracy, None if val is None else val.mean_cost_usd, test.accuracy,
            test.mean_cost_usd, test.cost / ref if ref and test.mean_cost_usd is not None else None,
            ", ".join(f"{a} {n}" for a, n in sorted(test.calls_by_agent.items(), key=lambda kv: -kv[1]))]


def markdown_table(df: pd.DataFrame) -> str:
    def cell(v) -> str:
        if v is None or (isinstance(v, float) and np.isnan(v)):
            return "-"
        if isinstance(v, float):
            return f"{v:.6g}" if abs(v) < 1e-3 and v else f"{v:.4f}".rstrip("0").rstrip(".")
        return str(v).replace("|", "\\|")
    head = "| " + " | ".join(df.columns) + " |\n|" + "---|" * len(df.columns) + "\n"
    return head + "".join("| " + " | ".join(cell(v) for v in row) + " |\n" for row in df.itertuples(index=False))


def write_png(figs, path: Path) -> str | None:
    """Write the figures stacked as one PNG; returns why not when kaleido or a chromium is missing."""
    try:
        import kaleido  # noqa: F401, PLC0415
    except ImportError:
        return "kaleido is not installed (pip install 'skillorchestra-studio[report]')"
    browser = os.environ.get("BROWSER_PATH") or shutil.which("chromium") or shutil.which("google-chrome")
    if not browser:
        return "no chromium/chrome found for kaleido (apt-get install chromium, or set BROWSER_PATH)"
    os.environ.setdefault("BROWSER_PATH", browser)
    from plotly.subplots import make_subplots  # noqa: PLC0415

    grid = make_subplots(rows=len(figs), cols=1, subplot_titles=[f.layout.title.text for f in figs],
                         vertical_spacing=0.12)
    for i, f in enumerate(figs, start=1):
        for trace in f.data:
            grid.add_trace(trace.update(showlegend=i == 1), row=i, col=1)
        grid.update_xaxes(title_text=f.layout.xaxis.title.text, row=i, col=1)
        grid.update_yaxes(title_text=f.layout.yaxis.title.text, row=i, col=1)
    grid.update_layout(height=560 * len(figs), width=1100, legend={"orientation": "h", "y": -0.06})
    try:
        grid.write_image(str(path))
    except Exception as exc:  # kaleido's browser failed to start: say so, keep the rest of the report
        return f"kaleido could not render: {type(exc).__name__}: {exc}"[:300]
    return None


def write_report(s: Session, handbook: str, out: Path, *, lambdas, objective_lambda: float | None = None,
                 candidates: str = "auto") -> list[str]:
    from skillorchestra_core.selection.figures import pareto_figure

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    table, lam, marks = report_rows(s, handbook, lambdas, objective_lambda, candidates)
    table.to_csv(out / "report.csv", index=False)
    title = f"# {handbook}: selected on val (objective λ={lam:g}), measured on test\n\n"
    (out / "report.md").write_text(title + markdown_table(table), encoding="utf-8")
    figs = [pareto_figure(load_view(s, handbook, split, objective_lambda=lam, rng=np.random.default_rng(0),
                                    mark=mark)) for split, mark in zip(("val", "test"), marks)]
    html = "".join(f.to_html(full_html=False, include_plotlyjs=(i == 0)) for i, f in enumerate(figs))
    (out / "pareto.html").write_text(f"<html><head><meta charset='utf-8'></head><body>{html}</body></html>",
                                     encoding="utf-8")
    written = [f"wrote {out / n}" for n in ("report.csv", "report.md", "pareto.html")]
    why = write_png(figs, out / "pareto.png")
    written.append(f"wrote {out / 'pareto.png'}" if why is None else f"no pareto.png: {why}")
    return written
