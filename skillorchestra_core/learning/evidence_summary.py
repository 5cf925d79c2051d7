"""What the explorer reads of a version's evidence, summed once and stored with the version.

A version's evidence never changes (its batches are fixed when it is made), so everything the Overview, Graph and
Posteriors pages need of it fits in a small summary: rolled-up S and F per (agent, mode, skill), the pooled
outcome and cost figures per (agent, mode), and three counts. Reading it back costs milliseconds where reading a
million trajectories costs seconds. Only the learn splits' trajectories are summed (held-out discipline); the
counts of queries and trajectories cover every split, as the Overview shows them.

Stored as one compressed blob of plain arrays (no pickle) per version, with a format number: a reader that meets
another format, or none, sums the evidence again.
"""

from __future__ import annotations

import io
from dataclasses import dataclass

import numpy as np
import pandas as pd
from sqlalchemy import delete, insert, select
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import DBAPIError

from skillorchestra_core.db.models import VersionSummary, table_of
from skillorchestra_core.errors import ReadOnlyDatabase
from skillorchestra_core.evidence.costs import cost_stats
from skillorchestra_core.evidence.reader import read_outcomes
from skillorchestra_core.handbook.content import HandbookContent
from skillorchestra_core.learning.competence import outcome_pool, weighted_counts
from skillorchestra_core.learning.content_frames import ContentFrames, content_frames

FORMAT = 1
_POOL = ("s_mode", "n_mode", "cost", "n_cost", "recorded")


@dataclass(frozen=True)
class EvidenceSummary:
    counts: pd.DataFrame  # agent, mode, skill, S, F (a parent counts its subtree): `weighted_counts`
    pool: pd.DataFrame  # agent, mode, s_mode, n_mode (`outcome_pool`), cost, n_cost, recorded (`cost_stats`)
    queries: int  # distinct queries over every split
    trajectories: int  # over every split
    learn_queries: int  # distinct queries of the learn splits
    learn_splits: tuple[str, ...]

    @property
    def learned_from(self) -> str:
        return learned_from(self.learn_queries, self.learn_splits)


def learned_from(n_queries: int, splits: tuple[str, ...]) -> str:
    """'learned from 4,195 train queries': what every posterior view says about its basis."""
    return f"learned from {n_queries:,} {'+'.join(splits)} quer{'y' if n_queries == 1 else 'ies'}"


def summarise(evidence: pd.DataFrame, attributions: pd.DataFrame, skills: pd.DataFrame, agents: pd.DataFrame,
              learn_splits: tuple[str, ...]) -> EvidenceSummary:
    """The summary of `evidence` (every split, OUTCOME_COLUMNS) under a content's attributions, skill tree and
    price cards (`agents`: agent, mode, input/output prices)."""
    learn = evidence[evidence["split"].isin(learn_splits)]
    counts = weighted_counts(learn, attributions, skills)
    pool = outcome_pool(learn).merge(cost_stats(learn, agents), on=["agent", "mode"], how="outer")
    return EvidenceSummary(
        counts=counts.astype({"S": float, "F": float}).reset_index(drop=True),
        pool=pool.astype({c: float for c in _POOL}).reset_index(drop=True),
        queries=int(evidence["query_id"].nunique()), trajectories=len(evidence),
        learn_queries=int(learn["query_id"].nunique()), learn_splits=tuple(learn_splits))


def encode(summary: EvidenceSummary) -> bytes:
    """Plain arrays in a compressed npz: names as one sorted vocabulary and codes, numbers as float64."""
    c, p = summary.counts, summary.pool
    vocab = np.array(sorted({*map(str, c["agent"]), *map(str, c["mode"]), *map(str, c["skill"]),
                             *map(str, p["agent"]), *map(str, p["mode"]), *summary.learn_splits}), dtype=str)

    def codes(values: pd.Series) -> np.ndarray:
        return np.searchsorted(vocab, np.asarray(values, dtype=str)).astype(np.int32)

    arrays = {
        "vocab": vocab, "totals": np.array([summary.queries, summary.trajectories, summary.learn_queries], np.int64),
        "learn_splits": codes(pd.Series(summary.learn_splits, dtype=object)),
        **{f"counts_{k}": codes(c[k]) for k in ("agent", "mode", "skill")},
        "counts_SF": c[["S", "F"]].to_numpy(np.float64),
        **{f"pool_{k}": codes(p[k]) for k in ("agent", "mode")},
        "pool_values": p[list(_POOL)].to_numpy(np.float64),
    }
    buf = io.BytesIO()
    np.savez_compressed(buf, allow_pickle=False, **arrays)
    return buf.getvalue()


def decode(blob: bytes) -> EvidenceSummary:
    with np.load(io.BytesIO(blob), allow_pickle=False) as z:
        vocab = pd.array(z["vocab"], dtype=object)
        sf, pv = z["counts_SF"].reshape(-1, 2), z["pool_values"].reshape(-1, len(_POOL))
        counts = pd.DataFrame({**{k: vocab.take(z[f"counts_{k}"]) for k in ("agent", "mode", "skill")},
                               "S": sf[:, 0], "F": sf[:, 1]})
        pool = pd.DataFrame({"agent": vocab.take(z["pool_agent"]), "mode": vocab.take(z["pool_mode"]),
                             **{k: pv[:, i] for i, k in enumerate(_POOL)}})
        queries, trajectories, learn_queries = (int(v) for v in z["totals"])
        splits = tuple(str(v) for v in vocab.take(z["learn_splits"]))
    return EvidenceSummary(counts, pool, queries, trajectories, learn_queries, splits)


def store_summary(conn: Connection, version_id: int, summary: EvidenceSummary) -> None:
    table = table_of(VersionSummary)
    conn.execute(delete(table).where(table.c.version_id == version_id))
    conn.execute(insert(table).values(version_id=version_id, format=FORMAT, payload=encode(summary)))


def stored_summary(conn: Connection, version_id: int) -> EvidenceSummary | None:
    """The version's stored summary, or None when it has none of this format (a version made before summaries
    were stored, or by other code)."""
    table = table_of(VersionSummary)
    row = conn.execute(select(table.c.format, table.c.payload).where(table.c.version_id == version_id)).first()
    return decode(bytes(row[1])) if row is not None and row[0] == FORMAT else None


def summary_of_content(conn: Connection, c: HandbookContent, frames: ContentFrames | None = None) -> EvidenceSummary:
    """Sum a content's summary from its batches' trajectories: the one read of the evidence it costs."""
    f = frames or content_frames(c)
    return summarise(read_outcomes(conn, c.evidence_batches), f.attributions, f.skills, f.agents,
                     tuple(c.learn_splits))


def version_summary(conn: Connection, version_id: int, c: HandbookContent,
                    frames: ContentFrames | None = None) -> EvidenceSummary:
    """The version's stored summary; else (a version made before summaries were stored) one summed now and kept."""
    found = stored_summary(conn, version_id)
    if found is not None:
        return found
    summary = summary_of_content(conn, c, frames)
    _keep(conn.engine, version_id, summary)
    return summary


def _keep(engine: Engine, version_id: int, summary: EvidenceSummary) -> None:
    """Store a summary summed on read, so the next server start does not sum it again. On a connection of its own:
    the caller's transaction is left as it is, and a read-only database, or another process storing it first, only
    costs the write."""
    try:
        with engine.begin() as conn:
            store_summary(conn, version_id, summary)
    except (DBAPIError, ReadOnlyDatabase):
        pass
