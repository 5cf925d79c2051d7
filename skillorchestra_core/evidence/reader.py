"""Read a version's trajectories as columns, fast: the evidence every routing model and posterior view is built from.

Turning a million SQL rows into Python objects is what reading costs, so the reader asks the database for as few
values as it can: one aggregate pass first finds the version's (agent, mode, source) groups and which optional
columns hold any value; the row pass then fetches numbers only (no text, no join), the group packed into the query
id as `query_id * n_groups + group`, straight from the DB-API cursor (no ORM rows), and columns that are NULL
everywhere are never fetched. The query's external id, split and task come from the query table (one row per
query, not per trajectory) by a vectorised lookup. Plain SQL through SQLAlchemy Core: SQLite and PostgreSQL alike.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from sqlalchemy import Integer, case, cast, literal, select
from sqlalchemy.engine import Connection

from skillorchestra_core.db.models import EvidenceBatch, Query, Trajectory

# The Core columns (typed loosely: SQLModel's attribute types do not carry SQL operators for mypy)
_T: Any = Trajectory.__table__.c  # type: ignore[attr-defined]
_Q: Any = Query.__table__.c  # type: ignore[attr-defined]
_B: Any = EvidenceBatch.__table__.c  # type: ignore[attr-defined]

OUTCOME_COLUMNS = ("trajectory_id", "query_id", "ext_id", "split", "task", "agent", "mode", "score", "prompt_tokens",
                   "completion_tokens", "cost_usd", "latency_s", "path", "source")
_OPTIONAL = ("prompt_tokens", "completion_tokens", "cost_usd", "latency_s")


def empty_outcomes() -> pd.DataFrame:
    return pd.DataFrame(columns=list(OUTCOME_COLUMNS)).astype(
        {"trajectory_id": "int64", "query_id": "int64", **{c: float for c in ("score", *_OPTIONAL)}})


def read_outcomes(conn: Connection, batch_ids: list[int]) -> pd.DataFrame:
    """Every trajectory of the batches, in id order, as the OUTCOME_COLUMNS frame."""
    if not batch_ids:
        return empty_outcomes()
    in_batches = _T.batch_id.in_(sorted(set(batch_ids)))
    vocab, present, has_path = _survey(conn, in_batches)
    if not vocab["agent"]:
        return empty_outcomes()
    values = _rows(conn, in_batches, vocab, present)
    order = np.argsort(values[:, 0], kind="stable") if (np.diff(values[:, 0]) < 0).any() else None
    if order is not None:
        values = values[order]
    ids = values[:, 0].astype(np.int64)
    rest = values[:, 1].astype(np.int64)
    codes = {}
    for name in ("source", "mode", "agent"):  # unpack ((query_id * nA + agent) * nM + mode) * nS + source
        rest, codes[name] = np.divmod(rest, len(vocab[name]))
    frame = {"trajectory_id": ids, "query_id": rest, **_query_columns(conn, batch_ids, rest)}
    for name in ("agent", "mode", "source"):
        frame[name] = pd.array(vocab[name], dtype="str").take(codes[name])
    frame["score"] = values[:, 2]
    for j, name in enumerate(present):
        frame[name] = values[:, 3 + j]
    for name in _OPTIONAL:
        frame.setdefault(name, np.full(len(ids), np.nan))
    frame["path"] = _paths(conn, in_batches, ids) if has_path else np.full(len(ids), None, dtype=object)
    return pd.DataFrame(frame, columns=list(OUTCOME_COLUMNS))


def _survey(conn: Connection, in_batches) -> tuple[dict[str, list[str]], list[str], bool]:
    """One pass: the sorted agent, mode and source values, the optional columns holding a value, whether any path
    is set (DISTINCT over a few flags keeps its working set tiny)."""
    t = _T
    rows = conn.execute(select(t.agent, t.mode, t.source, *(getattr(t, c).is_(None) for c in _OPTIONAL),
                               t.path.is_(None)).where(in_batches).distinct()).all()
    vocab = {name: sorted({str(r[i]) for r in rows}) for i, name in enumerate(("agent", "mode", "source"))}
    present = [c for j, c in enumerate(_OPTIONAL) if any(not r[3 + j] for r in rows)]
    return vocab, present, any(not r[-1] for r in rows)


def _code(column, values: list[str]):
    """The position of the column's value in `values`, computed by the database (no text crosses the driver)."""
    if len(values) == 1:
        return literal(0)
    return cast(case({v: i for i, v in enumerate(values)}, value=column, else_=0), Integer)


def _rows(conn: Connection, in_batches, vocab: dict[str, list[str]], present: list[str]) -> np.ndarray:
    """(N, 3 + len(present)) float rows: id, query id packed with the agent, mode and source codes, score, the
    present optional columns (NULL -> NaN). Integers stay exact: they are far below 2**53."""
    t = _T
    n_a, n_m, n_s = (len(vocab[k]) for k in ("agent", "mode", "source"))
    packed = ((t.query_id * n_a + _code(t.agent, vocab["agent"])) * n_m + _code(t.mode, vocab["mode"])) * n_s \
        + _code(t.source, vocab["source"])
    rows = _fetch(conn, select(t.id, packed, t.score, *(getattr(t, c) for c in present)).where(in_batches))
    return np.array(rows, dtype=float).reshape(len(rows), 3 + len(present))


def _fetch(conn: Connection, stmt) -> list[tuple]:
    """All rows as plain DB-API tuples (SQLAlchemy's Row objects would cost as much as the read itself)."""
    result = conn.execute(stmt)
    try:
        return list(result.cursor.fetchall()) if result.cursor is not None else [tuple(r) for r in result]
    finally:
        result.close()


def _paths(conn: Connection, in_batches, ids: np.ndarray) -> np.ndarray:
    """The path column (None where unset): only the rows that have one are read."""
    t = _T
    rows = _fetch(conn, select(t.id, t.path).where(in_batches, t.path.is_not(None)))
    out = np.full(len(ids), None, dtype=object)
    if rows:
        at = np.searchsorted(ids, np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows)))
        out[at] = [r[1] for r in rows]
    return out


def _query_columns(conn: Connection, batch_ids: list[int], qid: np.ndarray) -> dict[str, Any]:
    """ext_id, split and task of each trajectory's query, read once per query and looked up by id."""
    handbooks = select(_B.handbook_id).where(_B.id.in_(sorted(set(batch_ids))))
    q = pd.DataFrame(_fetch(conn, select(_Q.id, _Q.ext_id, _Q.split, _Q.task)
                            .where(_Q.handbook_id.in_(handbooks)).order_by(_Q.id)),
                     columns=["id", "ext_id", "split", "task"])
    ids = q["id"].to_numpy(np.int64)
    at = np.searchsorted(ids, qid)
    found = at < len(ids)
    found[found] = ids[at[found]] == qid[found]
    if not found.all():  # a trajectory of a query outside the batches' handbooks: read those queries by id
        extra = np.unique(qid[~found]).tolist()
        q = pd.concat([q, pd.DataFrame(_fetch(conn, select(_Q.id, _Q.ext_id, _Q.split, _Q.task)
                                              .where(_Q.id.in_(extra))), columns=q.columns)])
        q = q.sort_values("id", kind="stable").reset_index(drop=True)
        ids = q["id"].to_numpy(np.int64)
        at = np.searchsorted(ids, qid)
    return {c: q[c].astype("str" if c != "task" else object).array.take(at) for c in ("ext_id", "split", "task")}
