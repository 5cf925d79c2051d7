"""`learn` (a new version learned from the train traces) and `feedback` (an outcome for a stored decision)."""

from __future__ import annotations

import typer

from skillorchestra_core.cli.common import DB_INT_MAX, echo_json, state


def register(app: typer.Typer) -> None:
    app.command("learn")(learn)
    app.command("feedback")(feedback)


def learn(
    name: str = typer.Argument(..., help="Handbook name"),
    llm: str = typer.Option(None, "--llm", help="A litellm model string (default: offline, no LLM)"),
    max_queries: int = typer.Option(None, "--max-queries", min=1, help="Train queries per mode for discovery"),
    version: int = typer.Option(None, "--version", min=1, max=DB_INT_MAX,
                                help="Learn from this version (default: latest)"),
    ignore_task_labels: bool = typer.Option(False, "--ignore-task-labels",
                                            help="Offline: cluster query text even where queries carry task labels"),
    seed: int = typer.Option(0, "--seed"),
    author: str = typer.Option("cli", "--author"),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Discover skills, attribute the train queries, profile the agents and commit the result as a new version."""
    from skillorchestra_core.learning.pipeline import LearnOptions
    from skillorchestra_core.learning.run import run_learning

    options = LearnOptions(llm=llm, max_queries=max_queries, seed=seed, task_labels=not ignore_task_labels,
                           author=author)
    report = run_learning(state.db_url, name, options, version=version,
                          progress=None if as_json else _progress)
    if as_json:
        echo_json(report.to_dict())
        return
    if report.created:
        typer.echo(f"{report.handbook}: v{report.version} created from v{report.parent} [{report.method}]")
    else:
        typer.echo(f"{report.handbook}: unchanged, v{report.version} already holds what was learned [{report.method}]")
    for mode, skills in report.skills_added.items():
        typer.echo(f"  mode {mode}: {len(skills)} skill(s) added")
        for k in skills:
            prov = k["provenance"]
            how = prov.get("method", "") + (f" {prov['model']}" if prov.get("model") else "")
            typer.echo(f"    {k['key']:<48} {k['name'][:40]:<40} {prov.get('source', '')}:{how}")
    typer.echo("  attributed train (query, mode): " + ", ".join(f"{by} {n}" for by, n in
                                                               sorted(report.attributed.items())))
    typer.echo(f"  held-out queries attributed by text: {report.heldout_attributed}")
    for note in report.notes:
        typer.echo(f"  note: {note}")


def _progress(stage: str, fraction: float, detail: str) -> None:
    typer.echo(f"[{stage} {fraction:4.0%}] {detail}", err=True)


def feedback(
    trace_id: int = typer.Argument(..., help="Stored decision trace id"),
    score: float = typer.Option(..., "--score", help="The outcome, 0..1"),
    author: str = typer.Option("cli", "--author"),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Record the outcome of a routed decision as evidence; the handbook gets a new version that learns from it."""
    from skillorchestra_core.learning.feedback import record_feedback

    result = record_feedback(state.db_url, trace_id, score, author=author)
    if as_json:
        echo_json(result.to_dict())
        return
    typer.echo(f"feedback {score:g} on decision {trace_id} ({result.agent}): {result.handbook} v{result.version}; "
               + ", ".join(f"{k} {w:.3f}" for k, w in result.weights.items()) or "no skill (pooled rate only)")
