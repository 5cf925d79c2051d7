"""Members and roles: viewer (read), reviewer (decide candidates, restore versions), admin (also manage members).

Open mode: while no member is registered (a fresh local install), every named person acts as an admin, so one person
can curate without setup. Once anyone is registered, roles are enforced and unregistered names are viewers: register
members before sharing a database. An empty name may never decide.
"""

from __future__ import annotations

from sqlalchemy import func
from sqlmodel import Session, select

from skillorchestra_core.db.models import AuditLog, Member
from skillorchestra_core.errors import PermissionDenied, StudioError

ROLES = ("viewer", "reviewer", "admin")
_RANK = {r: i for i, r in enumerate(ROLES)}


def open_mode(s: Session) -> bool:
    return s.exec(select(func.count()).select_from(Member)).one() == 0


def role_of(s: Session, name: str) -> str:
    if open_mode(s):
        return "admin"
    row = s.exec(select(Member).where(Member.name == name.strip())).first()
    return row.role if row else "viewer"


def require(s: Session, name: str | None, needed: str, action: str) -> str:
    """The clean name when `name` may `action` (needs role `needed`), else PermissionDenied."""
    who = (name or "").strip()
    if not who:
        raise PermissionDenied(f"{action} needs a named person (--as NAME, or the reviewer name in the app)")
    role = role_of(s, who)
    if _RANK[role] < _RANK[needed]:
        raise PermissionDenied(f"{who!r} is a {role} and may not {action} (needs the {needed} role)")
    return who


def add_member(s: Session, name: str, role: str, actor: str | None = None) -> Member:
    """Register `name` with `role` (or change it). With members present, `actor` must be an admin; the CLI, which
    runs with direct access to the database file, may pass None."""
    if role not in ROLES:
        raise StudioError(f"unknown role {role!r}; use one of {', '.join(ROLES)}")
    who = name.strip()
    if not who:
        raise StudioError("a member needs a non-empty name")
    if actor is not None:
        require(s, actor, "admin", "manage members")
    row = s.exec(select(Member).where(Member.name == who)).first()
    before = row.role if row else None
    if row is None:
        row = Member(name=who, role=role, added_by=actor or "cli")
        s.add(row)
    row.role = role
    s.add(AuditLog(actor=actor or "cli", action="member.set", entity="member", entity_id=None,
                   details={"name": who, "before": {"role": before}, "after": {"role": role}}))
    s.flush()
    return row


def list_members(s: Session) -> list[tuple[str, str]]:
    return [(m.name, m.role) for m in s.exec(select(Member).order_by(Member.name))]
