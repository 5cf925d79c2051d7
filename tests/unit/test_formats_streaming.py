"""Large outcome files are read as they stream (chunks of records, one chunk of inserts at a time): the same rows,
line numbers and errors as reading whole, and equal strings shared across rows."""

from __future__ import annotations

import pandas as pd
import pytest
from sqlalchemy import func
from sqlmodel import select

from skillorchestra_core.db import session
from skillorchestra_core.db.models import Trajectory
from skillorchestra_core.evidence import ingest
from skillorchestra_core.formats import outcomes
from skillorchestra_core.formats.outcomes import import_outcomes, read_outcomes
from skillorchestra_core.formats.rows import MalformedFile, RowsRejected


@pytest.fixture
def db_url(any_db_url):
    """Every test here that imports into a database does so on SQLite and on PostgreSQL."""
    return any_db_url


def _frame(n_queries: int = 4, agents=("a", "b", "c")) -> pd.DataFrame:
    return pd.DataFrame([{"query_id": f"q{q}", "query": f"question number {q}?", "agent": a,
                          "score": (q + i) % 2, "task": f"t{q % 2}"}
                         for q in range(n_queries) for i, a in enumerate(agents)])


def test_parquet_is_read_batch_by_batch_with_continuous_row_numbers(tmp_path, monkeypatch):
    monkeypatch.setattr(outcomes, "CHUNK_ROWS", 2)
    df = _frame()
    df.loc[4, "score"] = 2.0  # row 5 (index + 1), in the third batch
    df.loc[9, "agent"] = ""  # row 10
    path = tmp_path / "o.parquet"
    df.to_parquet(path, row_group_size=3)
    with pytest.raises(RowsRejected) as err:
        read_outcomes(path)
    assert [b.line for b in err.value.bad_rows] == [5, 10]
    parsed = read_outcomes(path, skip_bad_rows=True)
    assert len(parsed.rows) == len(df) - 2
    assert [r.line for r in parsed.rows][:5] == [1, 2, 3, 4, 6]


def test_jsonl_columns_are_collected_while_streaming(tmp_path):
    path = tmp_path / "o.jsonl"
    lines = [r.to_json() for _, r in _frame(2).iterrows()]
    lines.insert(3, '{"query_id": "q9", "query": "x?", "agent": "a", "score": 1, "extra_b": 1, "extra_a": 2}')
    path.write_text("\r\n".join(lines) + "\r\n\r\n")
    parsed = read_outcomes(path)
    assert parsed.notes == ("ignored unknown column(s): extra_a, extra_b",)
    assert len(parsed.rows) == 7 and [r.line for r in parsed.rows][3] == 4


def test_csv_decoding_errors_name_their_line_when_streamed(tmp_path):
    path = tmp_path / "late.csv"
    body = "".join(f"q{i},question {i},a,1\n" for i in range(5000))
    path.write_bytes(("query_id,query,agent,score\n" + body).encode() + b"q,caf\xe9,a,1\n")
    with pytest.raises(MalformedFile, match=r"late.csv:5002: not UTF-8"):
        read_outcomes(path)


def test_equal_strings_are_shared_across_rows(tmp_path):
    path = tmp_path / "o.csv"
    _frame().to_csv(path, index=False)
    rows = read_outcomes(path).rows
    same_query = [r for r in rows if r.query_id == "q1"]
    assert len(same_query) == 3 and same_query[0].query is same_query[2].query
    assert same_query[0].query_id is same_query[1].query_id and rows[0].agent is rows[3].agent


def test_inserts_go_in_chunks_and_store_every_row(db_url, tmp_path, monkeypatch):
    monkeypatch.setattr(ingest, "INSERT_CHUNK", 4)
    path = tmp_path / "o.csv"
    _frame(5).to_csv(path, index=False)
    with session(db_url) as s:
        report = import_outcomes(s, path, "hb", skills_from_task=True)
        s.commit()
        stored = s.exec(select(Trajectory.agent, Trajectory.score).order_by(Trajectory.id)).all()
    assert report.result.trajectories_added == 15 == len(stored)
    assert [a for a, _ in stored][:4] == ["a", "b", "c", "a"]
    with session(db_url) as s:  # a second import of the same file adds nothing
        again = import_outcomes(s, path, "hb", skills_from_task=True)
        assert again.result.trajectories_added == 0
        assert s.exec(select(func.count()).select_from(Trajectory)).one() == 15
