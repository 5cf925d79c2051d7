"""What changes between two handbook versions (or a version and a proposed content): skills added, removed and
changed; posteriors that moved; routing choices that change on the validation queries (routed by their text only,
with each side's own routing model and the same lambda)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

import pandas as pd
from sqlalchemy import select
from sqlmodel import Session, col

from skillorchestra_core.db.models import Query
from skillorchestra_core.handbook.store import LoadedVersion, load_version
from skillorchestra_core.learning import profile
from skillorchestra_core.routing.batch import route_batch
from skillorchestra_core.routing.build import build_routing_model, routing_model
from skillorchestra_core.settings import get_settings

MIN_MOVE = 0.005  # posterior means closer than this are "unchanged"
_FIELDS = ("name", "description", "indicators", "examples", "parent_key", "mode")


@dataclass(frozen=True)
class VersionDiff:
    handbook: str
    before: str  # labels, e.g. "v1" or "v2 + proposal"
    after: str
    skills_added: list[dict] = field(default_factory=list)
    skills_removed: list[dict] = field(default_factory=list)
    skills_changed: list[dict] = field(default_factory=list)  # key, fields, before, after
    posteriors: list[dict] = field(default_factory=list)  # agent, skill, before, after, delta
    routing: list[dict] = field(default_factory=list)  # query_id, text, before, after
    val_queries: int = 0
    lam: float = 0.0
    mode: str = ""

    def as_json(self) -> dict:
        return asdict(self)

    @property
    def empty(self) -> bool:
        return not (self.skills_added or self.skills_removed or self.skills_changed or self.posteriors or self.routing)


def skill_changes(a: LoadedVersion, b: LoadedVersion) -> tuple[list[dict], list[dict], list[dict]]:
    sa, sb = a.content.skills, b.content.skills
    added = [asdict(sb[k]) for k in sorted(set(sb) - set(sa))]
    removed = [asdict(sa[k]) for k in sorted(set(sa) - set(sb))]
    changed = []
    for k in sorted(set(sa) & set(sb)):
        fields = [f for f in _FIELDS if getattr(sa[k], f) != getattr(sb[k], f)]
        if fields:
            changed.append({"key": k, "fields": fields, "before": {f: getattr(sa[k], f) for f in fields},
                            "after": {f: getattr(sb[k], f) for f in fields}})
    return added, removed, changed


def posterior_moves(s: Session, a: LoadedVersion, b: LoadedVersion) -> list[dict]:
    """Agent-skill posterior means that moved by at least MIN_MOVE, on skills both versions have."""
    ca = profile.competence(profile.load_frames(s, a))[["agent", "mode", "skill", "mean", "n"]]
    cb = profile.competence(profile.load_frames(s, b))[["agent", "mode", "skill", "mean", "n"]]
    j = ca.merge(cb, on=["agent", "mode", "skill"], suffixes=("_before", "_after"))
    j["delta"] = j["mean_after"] - j["mean_before"]
    j = j[j["delta"].abs() >= MIN_MOVE].sort_values("delta", key=lambda d: -d.abs(), kind="stable")
    return [{"agent": r.agent, "skill": r.skill, "before": round(float(r.mean_before), 4),
             "after": round(float(r.mean_after), 4), "delta": round(float(r.delta), 4),
             "n_before": round(float(r.n_before), 3), "n_after": round(float(r.n_after), 3)}
            for r in j.itertuples()]


def _val_queries(s: Session, handbook_id: int) -> pd.DataFrame:
    return pd.read_sql(select(col(Query.id), col(Query.text)).where(col(Query.handbook_id) == handbook_id,
                                                                   col(Query.split) == "val")
                       .order_by(col(Query.id)), s.connection())


def routing_changes(s: Session, a: LoadedVersion, b: LoadedVersion, lam: float,
                    stored_b: bool = True) -> tuple[list[dict], int, str]:
    """Val queries whose chosen agent differs. `stored_b` False: `b` is a proposal, built without the cache."""
    val = _val_queries(s, a.handbook_id)
    if val.empty:
        return [], 0, ""
    ma = routing_model(s, version_id=a.version_id)
    mb = routing_model(s, version_id=b.version_id) if stored_b else build_routing_model(s, b)
    texts = val["text"].tolist()
    ra, rb = route_batch(ma, texts, lam=lam), route_batch(mb, texts, lam=lam)
    out = [{"query_id": int(q), "text": t, "before": x, "after": y}
           for q, t, x, y in zip(val["id"], texts, ra.agents, rb.agents) if x != y]
    return out, len(texts), ra.mode


def diff_loaded(s: Session, a: LoadedVersion, b: LoadedVersion, lam: float | None = None,
                stored_b: bool = True, after_label: str | None = None) -> VersionDiff:
    lam = get_settings().default_lambda if lam is None else lam
    added, removed, changed = skill_changes(a, b)
    routing, n_val, mode = routing_changes(s, a, b, lam, stored_b)
    return VersionDiff(a.handbook_name, f"v{a.number}", after_label or f"v{b.number}", added, removed, changed,
                       posterior_moves(s, a, b), routing, n_val, lam, mode)


def diff_versions(s: Session, name: str, v1: int, v2: int, lam: float | None = None) -> VersionDiff:
    return diff_loaded(s, load_version(s, name, v1), load_version(s, name, v2), lam)
