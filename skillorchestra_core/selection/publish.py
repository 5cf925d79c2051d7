"""The published routing configuration of a handbook: which version, router and lambda production loads."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from datetime import datetime

from sqlmodel import Session, col, select

from skillorchestra_core.db.models import AuditLog, key
from skillorchestra_core.db.selection_tables import PublishedConfig
from skillorchestra_core.handbook.store import get_handbook, get_version
from skillorchestra_core.routing.inputs import check_lambda
from skillorchestra_core.routing.routers import REGISTRY
from skillorchestra_core.routing.utility import cost_unit_name


@dataclass(frozen=True)
class Published:
    handbook: str
    version: int
    content_hash: str
    router: str
    lam: float
    cost_unit: str
    run_id: int | None
    actor: str
    published_at: datetime
    id: int

    def to_dict(self) -> dict:
        d = asdict(self)
        d["lambda"] = d.pop("lam")
        return d

    def router_options(self) -> dict:
        """Keyword arguments of HandbookRouter for this configuration."""
        return {"router": self.router, "lam": self.lam, "cost_unit": self.cost_unit}


def publish(s: Session, handbook: str, version: int, lam: float, *, router: str = "skill",
            cost_unit: str = "normalised", run_id: int | None = None, actor: str = "system",
            note: str = "") -> Published:
    """Record (version, router, lambda) as the handbook's published configuration, with an audit row."""
    lam = check_lambda(lam)
    if router not in REGISTRY:
        raise ValueError(f"unknown router {router!r}; choose from {', '.join(REGISTRY)}")
    cost_unit = cost_unit_name(cost_unit)
    v = get_version(s, handbook, version)
    row = PublishedConfig(handbook_id=v.handbook_id, version_id=key(v), version_number=v.number,
                          content_hash=v.content_hash, router=router, lam=lam, cost_unit=cost_unit, run_id=run_id,
                          actor=actor, note=note)
    s.add(row)
    s.flush()
    s.add(AuditLog(actor=actor, action="routing.publish", entity="published_config", entity_id=row.id,
                   handbook_id=v.handbook_id, details={"version": v.number, "router": router, "lambda": lam,
                                                       "cost_unit": cost_unit, "run_id": run_id, "note": note}))
    s.flush()
    return _typed(handbook, row)


def published(s: Session, handbook: str) -> Published | None:
    """The latest published configuration of `handbook`, None when nothing was published."""
    hb = get_handbook(s, handbook)
    row = s.exec(select(PublishedConfig).where(PublishedConfig.handbook_id == hb.id)
                 .order_by(col(PublishedConfig.id).desc())).first()
    return None if row is None else _typed(handbook, row)


def _typed(handbook: str, row: PublishedConfig) -> Published:
    return Published(handbook, row.version_number, row.content_hash, row.router, row.lam, row.cost_unit,
                     row.run_id, row.actor, row.published_at, key(row))
