"""Evidence batches: the unit a version's evidence is made of.

Each import stores its new trajectories as one batch and the version it creates lists its parent's batches plus the
new one. Membership is explicit, so a version's evidence cannot change when another writer commits later or when a
database allocates ids out of commit order. A batch's digest hashes its content, so two handbooks holding the same
evidence (or a file exported from one of them) can recognise it without comparing ids.
"""

from __future__ import annotations

import hashlib
from typing import Iterable

from sqlalchemy import insert
from sqlmodel import Session, col, select

from skillorchestra_core.db.models import EvidenceBatch, VersionBatch, key

# Fields that identify a trajectory's content; the digest covers them in a fixed order.
DIGEST_FIELDS = ("ext_id", "agent", "mode", "source", "score", "prompt_tokens", "completion_tokens", "cost_usd",
                 "latency_s")


def _canon(value) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return repr(float(value)) if not value.is_integer() else str(int(value))
    return str(value)


def digest_rows(rows: Iterable[tuple]) -> str:
    """Order-independent sha256 of trajectory rows given as tuples in DIGEST_FIELDS order."""
    lines = sorted("\x1f".join(_canon(v) for v in row) for row in rows)
    h = hashlib.sha256()
    for line in lines:
        h.update(line.encode("utf-8", "surrogatepass"))
        h.update(b"\n")
    return h.hexdigest()


def new_batch(s: Session, handbook_id: int, source: str, rows: list[tuple]) -> int:
    """Create an (empty-id) batch for `rows` (DIGEST_FIELDS tuples) and return its id."""
    batch = EvidenceBatch(handbook_id=handbook_id, digest=digest_rows(rows), trajectories=len(rows), source=source)
    s.add(batch)
    s.flush()
    return key(batch)


def batch_digests(s: Session, batch_ids: Iterable[int]) -> dict[int, str]:
    ids = sorted(set(batch_ids))
    if not ids:
        return {}
    rows = s.exec(select(EvidenceBatch.id, EvidenceBatch.digest).where(col(EvidenceBatch.id).in_(ids)))
    return {i: d for i, d in rows if i is not None}


def version_batches(s: Session, version_id: int) -> list[int]:
    return sorted(s.exec(select(VersionBatch.batch_id).where(VersionBatch.version_id == version_id)).all())


def link_batches(s: Session, version_id: int, batch_ids: Iterable[int]) -> None:
    rows = [dict(version_id=version_id, batch_id=b) for b in sorted(set(batch_ids))]
    if rows:
        s.exec(insert(VersionBatch), params=rows)


def handbook_digests(s: Session, handbook_id: int) -> dict[str, int]:
    """digest -> batch id for every batch the handbook holds."""
    rows = s.exec(select(EvidenceBatch.digest, EvidenceBatch.id).where(EvidenceBatch.handbook_id == handbook_id))
    return {d: i for d, i in rows if i is not None}
