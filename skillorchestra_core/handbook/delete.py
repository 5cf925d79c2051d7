"""Delete a handbook with everything that hangs off it (versions, evidence, and any table that points at them)."""

from __future__ import annotations

from sqlalchemy import delete
from sqlmodel import Session, SQLModel, col, select

from skillorchestra_core.db.models import AuditLog, HandbookVersion, Query
from skillorchestra_core.handbook.store import get_handbook


def delete_handbook(s: Session, name: str, actor: str = "cli") -> None:
    hb = get_handbook(s, name)
    version_ids = list(s.exec(select(col(HandbookVersion.id)).where(HandbookVersion.handbook_id == hb.id)))
    query_ids = list(s.exec(select(col(Query.id)).where(Query.handbook_id == hb.id)))
    owners = {"handbook": [hb.id], "handbook_version": version_ids, "query": query_ids}
    # Children first: walk the tables in reverse dependency order and delete rows pointing at the handbook's rows.
    for table in reversed(SQLModel.metadata.sorted_tables):
        if table.name == "audit_log":
            continue
        for fk in table.foreign_keys:
            ids = owners.get(fk.column.table.name)
            if ids and fk.column.name == "id":
                s.exec(delete(table).where(fk.parent.in_(ids)))
        if table.name in owners:
            s.exec(delete(table).where(table.c.id.in_(owners[table.name])))
    s.add(AuditLog(actor=actor, action="handbook.delete", entity="handbook", entity_id=hb.id,
                   details={"name": name, "versions": len(version_ids), "queries": len(query_ids)}))
    s.flush()
