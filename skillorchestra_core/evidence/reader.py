"""Read a version's trajectories as columns, fast: the evidence every routing model and posterior view is built from.

Turning a million SQL rows into Python objects is what reading costs, so the reader asks the database for as few
values as it can: one DISTINCT pass over a few flags first finds the version's (agent, mode, source) groups, which
optional columns hold any value and whether every score is 0 or 1; the row pass then fetches numbers only (no text,
no join) straight from the DB-API cursor (no ORM rows), whole numbers packed mixed-radix into as few values per row
as stay exact as floats (below 2**53): typically the trajectory id, the query id with its group codes and a 0/1
score become one number. Token counts stay plain (small integers are cheap to fetch). Columns that are NULL
everywhere are never fetched. The query's external id, split and task come from the query table (one row per
query, not per trajectory) by a vectorised lookup. Plain SQL through SQLAlchemy Core: SQLite and PostgreSQL alike.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from sqlalchemy import BigInteger, Integer, case, cast, func, literal, select
from sqlalchemy.engine import Connection

from skillorchestra_core.db.models import EvidenceBatch, Query, Trajectory
from skillorchestra_core.db.rows import fetch_tuples

# The Core columns (typed loosely: SQLModel's attribute types do not carry SQL operators for mypy)
_T: Any = Trajectory.__table__.c  # type: ignore[attr-defined]
_Q: Any = Query.__table__.c  # type: ignore[attr-defined]
_B: Any = EvidenceBatch.__table__.c  # type: ignore[attr-defined]

OUTCOME_COLUMNS = ("trajectory_id", "query_id", "ext_id", "split", "task", "agent", "mode", "score", "prompt_tokens",
                   "completion_tokens", "cost_usd", "latency_s", "path", "source")
_OPTIONAL = ("prompt_tokens", "completion_tokens", "cost_usd", "latency_s")
_EXACT = 2 ** 53  # integers below this are exact as floats


def empty_outcomes() -> pd.DataFrame:
    return pd.DataFrame(columns=list(OUTCOME_COLUMNS)).astype(
        {"trajectory_id": "int64", "query_id": "int64", **{c: float for c in ("score", *_OPTIONAL)}})


def read_outcomes(conn: Connection, batch_ids: list[int], agent: str | None = None,
                  mode: str | None = None) -> pd.DataFrame:
    """Every trajectory of the batches, in id order, as the OUTCOME_COLUMNS frame; `agent` and `mode` keep only
    one agent's (one posterior cell's evidence)."""
    if not batch_ids:
        return empty_outcomes()
    batches = sorted(set(batch_ids))
    in_batches = _T.batch_id.in_(batches)
    scan = _scan(conn, batches, in_batches)
    for column, value in (("agent", agent), ("mode", mode)):
        if value is not None:
            in_batches, scan = in_batches & (_T[column] == value), scan & (_T[column] == value)
    survey = _survey(conn, in_batches)
    vocab, present = survey.vocab, survey.present
    if not vocab["agent"]:
        return empty_outcomes()
    fields = _fields(survey)
    slots = _slots(fields)
    plain = [name for name, radix, _ in fields if radix is None]
    values = _rows(conn, scan, fields, slots, plain)
    unpacked = _unpack(values, fields, slots, plain)
    ids = unpacked["id"]
    order = np.argsort(ids, kind="stable") if (np.diff(ids) < 0).any() else None
    if order is not None:
        unpacked = {k: v[order] for k, v in unpacked.items()}
        ids = unpacked["id"]
    rest = unpacked["group"]
    codes = {}
    for name in ("source", "mode", "agent"):  # unpack ((query_id * nA + agent) * nM + mode) * nS + source
        rest, codes[name] = np.divmod(rest, len(vocab[name]))
    frame = {"trajectory_id": ids, "query_id": rest, **_query_columns(conn, batch_ids, rest)}
    for name in ("agent", "mode", "source"):
        frame[name] = pd.array(vocab[name], dtype="str").take(codes[name])
    frame["score"] = unpacked["score"]
    for name in present:
        frame[name] = unpacked[name]
    for name in _OPTIONAL:
        frame.setdefault(name, np.full(len(ids), np.nan))
    frame["path"] = _paths(conn, in_batches, ids) if survey.has_path else np.full(len(ids), None, dtype=object)
    return pd.DataFrame(frame, columns=list(OUTCOME_COLUMNS))


@dataclass(frozen=True)
class _Survey:
    vocab: dict[str, list[str]]  # sorted agent, mode and source values
    present: list[str]  # the optional columns holding some value
    has_path: bool
    max_id: int  # bounds over the whole table (an index lookup each): enough for packing
    max_query_id: int
    binary_score: bool  # every score is 0 or 1


def _survey(conn: Connection, in_batches) -> _Survey:
    """One pass: the sorted agent, mode and source values, the optional columns holding a value, whether any path
    is set and whether every score is 0 or 1 (DISTINCT over a few flags keeps its working set tiny); the id bounds
    come from the indexes."""
    t = _T
    flags = [*(getattr(t, c).is_(None) for c in _OPTIONAL), t.path.is_(None), t.score.in_([0, 1])]
    rows = conn.execute(select(t.agent, t.mode, t.source, *flags).where(in_batches).distinct()).all()
    vocab = {name: sorted({str(r[i]) for r in rows}) for i, name in enumerate(("agent", "mode", "source"))}
    n = len(_OPTIONAL)
    present = [c for j, c in enumerate(_OPTIONAL) if any(not r[3 + j] for r in rows)]
    max_id = conn.execute(select(func.max(t.id))).scalar()  # one aggregate each: SQLite reads it off an index
    max_query_id = conn.execute(select(func.max(t.query_id))).scalar()
    return _Survey(vocab, present, any(not r[3 + n] for r in rows), int(max_id or 0), int(max_query_id or 0),
                   all(r[4 + n] for r in rows))


def _code(column, values: list[str]):
    """The position of the column's value in `values`, computed by the database (no text crosses the driver)."""
    if len(values) == 1:
        return literal(0)
    return cast(case({v: i for i, v in enumerate(values)}, value=column, else_=0), Integer)


def _fields(survey: _Survey) -> list[tuple[str, int | None, Any]]:
    """(name, radix, SQL expression) of every value the row pass fetches: a radix means an integer in
    [0, radix) that can share a fetched number with others; None means fetched as it is (a float, NULL -> NaN)."""
    t, vocab = _T, survey.vocab
    n_a, n_m, n_s = (len(vocab[k]) for k in ("agent", "mode", "source"))
    group = ((cast(t.query_id, BigInteger) * n_a + _code(t.agent, vocab["agent"])) * n_m
             + _code(t.mode, vocab["mode"])) * n_s + _code(t.source, vocab["source"])
    fields: list[tuple[str, int | None, Any]] = [
        ("id", survey.max_id + 1, cast(t.id, BigInteger)),
        ("group", (survey.max_query_id + 1) * n_a * n_m * n_s, group),
        ("score", 2 if survey.binary_score else None, cast(t.score, Integer) if survey.binary_score else t.score)]
    # Token counts stay plain: small integers cost the driver little, and proving them packable costs a pass.
    fields += [(name, None, getattr(t, name)) for name in survey.present]
    return fields


def _slots(fields: list[tuple[str, int | None, Any]]) -> list[list[int]]:
    """Packable fields grouped so that each group's mixed-radix number stays below 2**53 (exact as a float)."""
    slots: list[list[int]] = []
    size = 0
    for i, (_, radix, _) in enumerate(fields):
        if radix is None:
            continue
        if slots and size * radix <= _EXACT:
            slots[-1].append(i)
            size *= radix
        else:
            slots.append([i])
            size = radix
    return slots


def _rows(conn: Connection, in_batches, fields, slots: list[list[int]], plain: list[str]) -> np.ndarray:
    """(N, slots + plain) floats: each slot one mixed-radix number (its fields, first most significant), then the
    plain columns (NULL -> NaN). Turning fetched values into Python objects is the cost, so fewer values is faster."""
    columns: list[Any] = []
    for slot in slots:
        expr: Any = fields[slot[0]][2]
        for i in slot[1:]:
            _, radix, value = fields[i]
            expr = expr * radix + value
        columns.append(expr)
    columns += [value for name, _, value in fields if name in plain]
    rows = fetch_tuples(conn, select(*columns).where(in_batches))
    return np.array(rows, dtype=float).reshape(len(rows), len(columns))


def _scan(conn: Connection, batches: list[int], in_batches):
    """The row filter. SQLite reads rows through the batch index one lookup at a time, slower than scanning the
    table when the batches hold most of it: then the filter is written so that the index is not used (two counts
    decide, each an index walk)."""
    if conn.dialect.name != "sqlite":
        return in_batches
    t = _T
    total = conn.execute(select(func.count()).select_from(_T.id.table)).scalar_one()
    mine = conn.execute(select(func.count()).where(in_batches)).scalar_one()
    return (t.batch_id + 0).in_(batches) if 2 * mine >= total else in_batches


def _unpack(values: np.ndarray, fields, slots: list[list[int]], plain: list[str]) -> dict[str, np.ndarray]:
    out: dict[str, np.ndarray] = {}
    for j, slot in enumerate(slots):
        rest = values[:, j].astype(np.int64)
        for i in reversed(slot):
            name, radix, _ = fields[i]
            rest, out[name] = np.divmod(rest, radix)
    for j, name in enumerate(plain):
        out[name] = values[:, len(slots) + j]
    out["score"] = out["score"].astype(float)
    return out


def _paths(conn: Connection, in_batches, ids: np.ndarray) -> np.ndarray:
    """The path column (None where unset): only the rows that have one are read."""
    t = _T
    rows = fetch_tuples(conn, select(t.id, t.path).where(in_batches, t.path.is_not(None)))
    out = np.full(len(ids), None, dtype=object)
    if rows:
        at = np.searchsorted(ids, np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows)))
        out[at] = [r[1] for r in rows]
    return out


def _query_columns(conn: Connection, batch_ids: list[int], qid: np.ndarray) -> dict[str, Any]:
    """ext_id, split and task of each trajectory's query, read once per query and looked up by id."""
    handbooks = select(_B.handbook_id).where(_B.id.in_(sorted(set(batch_ids))))
    q = pd.DataFrame(fetch_tuples(conn, select(_Q.id, _Q.ext_id, _Q.split, _Q.task)
                            .where(_Q.handbook_id.in_(handbooks)).order_by(_Q.id)),
                     columns=["id", "ext_id", "split", "task"])
    ids = q["id"].to_numpy(np.int64)
    at = np.searchsorted(ids, qid)
    found = at < len(ids)
    found[found] = ids[at[found]] == qid[found]
    if not found.all():  # a trajectory of a query outside the batches' handbooks: read those queries by id
        extra = np.unique(qid[~found]).tolist()
        q = pd.concat([q, pd.DataFrame(fetch_tuples(conn, select(_Q.id, _Q.ext_id, _Q.split, _Q.task)
                                              .where(_Q.id.in_(extra))), columns=q.columns)])
        q = q.sort_values("id", kind="stable").reset_index(drop=True)
        ids = q["id"].to_numpy(np.int64)
        at = np.searchsorted(ids, qid)
    return {c: q[c].astype("str" if c != "task" else object).array.take(at) for c in ("ext_id", "split", "task")}
