"""`import` and `export` commands: a thin layer over skillorchestra_core.formats.

Every import validates the whole file first and writes nothing when a row is bad (unless --skip-bad-rows), commits
once at the end, and prints what it did.
"""

from __future__ import annotations

from pathlib import Path

import typer

from skillorchestra_core.cli.common import DB_INT_MAX, db_session, state
from skillorchestra_core.db.engine import write_with_retry

import_app = typer.Typer(no_args_is_help=True, help="Import evidence or a handbook file into a handbook.")

_HANDBOOK = typer.Option(..., "--handbook", "-H", help="Handbook to import into (created when new)")
_SKIP = typer.Option(False, "--skip-bad-rows", help="Skip and list bad rows instead of rejecting the file")


def register(app: typer.Typer) -> None:
    app.add_typer(import_app, name="import")
    app.command("export")(export)


def _run(do) -> None:
    # One transaction, committed only when every check passed; redone when a concurrent writer got there first.
    report = write_with_retry(do, state.db_url)
    for line in report.lines():
        typer.echo(line)


@import_app.command("outcomes")
def import_outcomes_cmd(
    path: Path = typer.Argument(..., help="Outcomes file: .csv, .jsonl or .parquet"),
    handbook: str = _HANDBOOK,
    skills_from_task: bool = typer.Option(False, "--skills-from-task", help="One skill per task label"),
    skip_bad_rows: bool = _SKIP,
    dataset: str = typer.Option(None, "--dataset", help="Dataset name stored with the queries (default: file name)"),
) -> None:
    """Import an outcomes long-format file: one row per (query, agent) attempt."""
    from skillorchestra_core.formats.outcomes import import_outcomes

    _run(lambda s: import_outcomes(s, path, handbook, skills_from_task=skills_from_task,
                                   skip_bad_rows=skip_bad_rows, dataset=dataset))


@import_app.command("llmrouter")
def import_llmrouter_cmd(
    directory: Path = typer.Argument(..., help="The LLMRouter folder (dcrouter_*.json, default_query_*.jsonl, ...)"),
    handbook: str = _HANDBOOK,
    skills_from_task: bool = typer.Option(True, "--skills-from-task/--no-skills-from-task",
                                          help="One skill per task label (on by default)"),
    skip_bad_rows: bool = _SKIP,
) -> None:
    """Import the LLMRouter outcome set (9 models, 14 task labels, 5,989 questions)."""
    from skillorchestra_core.formats.llmrouter import import_llmrouter

    _run(lambda s: import_llmrouter(s, directory, handbook, skills_from_task=skills_from_task,
                                    skip_bad_rows=skip_bad_rows))


@import_app.command("exploration")
def import_exploration_cmd(
    path: Path = typer.Argument(..., help="SkillOrchestra inference_results.jsonl (explore.py or evaluate.py)"),
    handbook: str = _HANDBOOK,
    mode: str = typer.Option("answer", "--mode", help="Mode of the trajectories (the reference uses 'search')"),
    skills_from_task: bool = typer.Option(False, "--skills-from-task", help="One skill per task label"),
    skip_bad_rows: bool = _SKIP,
    dataset: str = typer.Option(None, "--dataset", help="Dataset name stored with the queries (default: file name)"),
) -> None:
    """Import a SkillOrchestra model-routing exploration file."""
    from skillorchestra_core.formats.exploration import import_exploration

    _run(lambda s: import_exploration(s, path, handbook, mode=mode, skills_from_task=skills_from_task,
                                      skip_bad_rows=skip_bad_rows, dataset=dataset))


@import_app.command("handbook")
def import_handbook_cmd(
    path: Path = typer.Argument(..., help="SkillOrchestra canonical handbook JSON"),
    handbook: str = _HANDBOOK,
) -> None:
    """Import a SkillOrchestra canonical handbook file as a new version."""
    from skillorchestra_core.formats.canonical import import_handbook

    _run(lambda s: import_handbook(s, path, handbook))


def export(
    name: str = typer.Argument(..., help="Handbook name"),
    fmt: str = typer.Option("skillorchestra", "--format", "-f",
                            help="skillorchestra (canonical handbook), rsl, stage-router or json (full dump)"),
    output: str = typer.Option(..., "--output", "-o", help="File to write, or - for standard output"),
    version: int = typer.Option(None, "--version", min=1, max=DB_INT_MAX, help="Version number (default: latest)"),
) -> None:
    """Export one handbook version."""
    import json

    from skillorchestra_core.formats.export import export_document, write_json

    with db_session() as s:
        doc, number = export_document(s, name, fmt, version)
    if output == "-":
        typer.echo(json.dumps(doc, indent=2, ensure_ascii=False))
        return
    write_json(doc, output)
    typer.echo(f"exported {name} v{number} as {fmt} to {output}")
