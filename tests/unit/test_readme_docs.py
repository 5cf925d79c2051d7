"""The README documents what exists: every page of the app, every CLI command and every router; its route examples
use questions that are in the demo data (so a newcomer can paste them)."""

from __future__ import annotations

import ast
import re
import shlex
from pathlib import Path

import pytest
import typer

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def _pages() -> list[tuple[str, str]]:
    """(title, url path) of every st.Page registered in app.py's st.navigation."""
    tree = ast.parse((ROOT / "app.py").read_text(encoding="utf-8"))
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "Page":
            kw = {k.arg: k.value.value for k in node.keywords if isinstance(k.value, ast.Constant)}
            path = node.args[0].value
            out.append((kw.get("title", Path(path).stem), "/" + kw.get("url_path", "") if not kw.get("default")
                        else "/"))
    return out


def _commands() -> list[str]:
    from skillorchestra_core.cli import app

    def walk(cmd, prefix):
        for name, sub in sorted(getattr(cmd, "commands", {}).items()):
            if getattr(sub, "commands", None):
                yield from walk(sub, f"{prefix}{name} ")
            else:
                yield f"{prefix}{name}"

    return list(walk(typer.main.get_command(app), ""))


def test_every_page_is_documented():
    pages = _pages()
    assert len(pages) >= 5
    section = README[README.index("## Pages"):]
    for title, url in pages:
        assert re.search(rf"\*\*{re.escape(title)}\*\* \(`{re.escape(url)}`\)", section), (title, url)


def test_every_cli_command_is_documented():
    commands = _commands()
    assert "route" in commands and "import outcomes" in commands
    missing = [c for c in commands if f"skillorchestra {c}" not in README]
    assert not missing, f"commands missing from README.md: {missing}"


def test_every_router_is_documented():
    from skillorchestra_core.routing.routers import list_routers

    names = [r.name for r in list_routers()]
    assert "skill" in names
    missing = [n for n in names if f"| `{n}` |" not in README]
    assert not missing, f"routers missing from README.md's router table: {missing}"


def test_route_examples_use_questions_in_the_demo_data(demo_db_url):
    from sqlmodel import select

    from skillorchestra_core.db import session
    from skillorchestra_core.db.models import Handbook, Query

    examples = []
    for line in README.splitlines():
        if line.startswith("skillorchestra route ") and '"QUERY"' not in line:
            args = shlex.split(line.split("#")[0])
            examples.append((args[2], args[3], "--execute" in args and args[args.index("--execute") + 1]))
    replays = [e for e in examples if e[2] == "replay"]
    assert examples and replays
    with session(demo_db_url) as s:
        for handbook, question, _ in replays:  # replay needs the recorded outcome: the question must be there
            hb = s.exec(select(Handbook).where(Handbook.name == handbook)).one()
            found = s.exec(select(Query.id).where(Query.handbook_id == hb.id, Query.text == question)).first()
            assert found is not None, f"README replays a question not in {handbook}: {question!r}"


@pytest.mark.parametrize("target", ["run", "test"])
def test_the_two_newcomer_commands_stay(target):
    assert f"make {target}" in README
