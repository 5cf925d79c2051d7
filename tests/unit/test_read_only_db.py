"""A SQLite database the user cannot write (the file, or its folder too) can still be listed and read; a write is
one line of error. The tests run as root, who may write anything, so the permission check is told what an
unprivileged user would see; SQLite then enforces read-only itself (`mode=ro` / `immutable=1`)."""

from __future__ import annotations

import os

import pytest
from sqlmodel import func, select

from skillorchestra_core.cli import main
from skillorchestra_core.db import dispose_engines, session
from skillorchestra_core.db.engine import read_only_mode
from skillorchestra_core.db.models import Trajectory
from skillorchestra_core.evidence.ingest import OutcomeRow, ingest_outcomes


def _rows(tag: str):
    return [OutcomeRow(i + 1, f"{tag}{i // 2}", f"text {tag} {i // 2}", "ab"[i % 2], float(i % 3 == 0), task="t")
            for i in range(8)]


@pytest.fixture
def locked_db(tmp_path):
    folder = tmp_path / "db"
    path = folder / "studio.db"
    with session(f"sqlite:///{path}") as s:
        ingest_outcomes(s, "hb", _rows("q"), source_label="f.csv", skills_from_task=True)
        s.commit()
    dispose_engines()  # checkpoints the WAL into the file and removes the side files
    path.chmod(0o444)
    yield folder, path
    dispose_engines()
    folder.chmod(0o755)


def _cli(capsys, *argv: str) -> tuple[int, str, str]:
    try:
        main(list(argv))
        code = 0
    except SystemExit as exc:
        code = exc.code or 0
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.mark.parametrize("folder_writable", [True, False], ids=["read-only file", "read-only folder"])
def test_a_database_the_user_cannot_write_is_listed_shown_and_refuses_writes_in_one_line(
        locked_db, folder_writable, monkeypatch, capsys, tmp_path):
    folder, path = locked_db
    if not folder_writable:
        folder.chmod(0o555)
    real_access = os.access
    denied = {str(path)} | (set() if folder_writable else {str(folder)})
    monkeypatch.setattr(os, "access", lambda p, mode, **kw: (str(p) not in denied or mode != os.W_OK)
                        and real_access(p, mode, **kw))
    url = f"sqlite:///{path}"
    code, out, err = _cli(capsys, "--db", url, "handbooks")
    assert code == 0, err
    assert "hb: v1 (1 versions)" in out and "trajectories=8" in out
    code, out, err = _cli(capsys, "--db", url, "show", "hb", "--json")
    assert code == 0, err
    assert '"handbook": "hb"' in out
    extra = tmp_path / "more.csv"
    extra.write_text("query_id,query,agent,score\nn1,new question,a,1\n")
    code, out, err = _cli(capsys, "--db", url, "import", "outcomes", str(extra), "--handbook", "hb")
    assert code == 1
    assert err.startswith("error: ") and len(err.strip().splitlines()) == 1, err
    assert "readonly" in err
    if not folder_writable:
        assert sorted(p.name for p in folder.iterdir()) == ["studio.db"]  # no side files were even tried
    dispose_engines()
    monkeypatch.undo()
    with session(url) as s:  # nothing was written
        assert s.exec(select(func.count()).select_from(Trajectory)).one() == 8


def test_read_only_mode_follows_the_file_and_folder_permissions(tmp_path, monkeypatch):
    path = tmp_path / "x.db"
    assert read_only_mode(path) is None  # no file yet: it will be created
    path.write_bytes(b"")
    writable = {str(tmp_path): True, str(path): True}
    monkeypatch.setattr(os, "access", lambda p, mode: writable[str(p)])
    assert read_only_mode(path) is None
    writable[str(path)] = False
    assert read_only_mode(path) == "ro"
    writable[str(tmp_path)] = False
    assert read_only_mode(path) == "immutable"
