"""Handbooks and their immutable versions: load a version's content, commit edited content as a new version."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import func, insert
from sqlalchemy import select as sa_select
from sqlalchemy.exc import IntegrityError, OperationalError
from sqlmodel import Session, col, select

from skillorchestra_core.db.engine import lock_for_write
from skillorchestra_core.db.models import (
    Agent,
    Attribution,
    AuditLog,
    Handbook,
    HandbookVersion,
    ImportedCompetence,
    Mode,
    Query,
    Skill,
    Trajectory,
    key,
)
from skillorchestra_core.db.retry import get_or_create
from skillorchestra_core.db.rows import fetch_tuples
from skillorchestra_core.errors import Conflict, NotFound, StudioError
from skillorchestra_core.evidence.batches import batch_digests, link_batches, version_batches
from skillorchestra_core.handbook.content import (
    DEFAULT_LEARN_SPLITS,
    AgentSpec,
    HandbookContent,
    ImportedCounts,
    ModeSpec,
    SkillSpec,
    validate_content,
)


@dataclass(frozen=True)
class LoadedVersion:
    handbook_id: int
    handbook_name: str
    version_id: int
    number: int
    content_hash: str
    content: HandbookContent
    synthetic: bool = False

    @property
    def label(self) -> str:
        return f"{self.handbook_name} v{self.number}"


@dataclass(frozen=True)
class HandbookSummary:
    name: str
    description: str
    synthetic: bool
    versions: int
    latest: int
    modes: int
    skills: int
    agents: int
    queries: int
    trajectories: int


def get_or_create_handbook(s: Session, name: str, description: str = "", synthetic: bool = False) -> Handbook:
    if not name or not name.strip():
        raise StudioError("a handbook needs a non-empty name")
    hb, _ = get_or_create(s, Handbook, {"name": name}, {"description": description, "synthetic": synthetic})
    return hb


def get_handbook(s: Session, name: str) -> Handbook:
    hb = s.exec(select(Handbook).where(Handbook.name == name)).first()
    if hb is None:
        known = ", ".join(s.exec(select(Handbook.name).order_by(Handbook.name)).all()) or "none"
        raise NotFound(f"no handbook named {name!r} (known: {known})")
    return hb


def is_candidate(version: HandbookVersion) -> bool:
    """A selection candidate: a stored branch of another version, never the handbook's latest."""
    return "candidate" in (version.metadata_ or {})


def latest_version(s: Session, handbook_id: int) -> HandbookVersion | None:
    """The handbook's latest version: the newest one that is not a selection candidate."""
    rows = s.exec(select(HandbookVersion).where(HandbookVersion.handbook_id == handbook_id)
                  .order_by(col(HandbookVersion.number).desc()))
    return next((v for v in rows if not is_candidate(v)), None)


def get_version(s: Session, name: str, number: int | None = None) -> HandbookVersion:
    """The numbered version of handbook `name`, or its latest (not a selection candidate) when `number` is None."""
    hb = get_handbook(s, name)
    stmt = select(HandbookVersion).where(HandbookVersion.handbook_id == hb.id)
    if number is None:
        version = latest_version(s, key(hb))
    else:
        version = s.exec(stmt.where(HandbookVersion.number == number)).first()
    if version is None:
        what = "any version" if number is None else f"version {number}"
        raise NotFound(f"handbook {name!r} has no {what}")
    return version


def list_versions(s: Session, name: str) -> list[HandbookVersion]:
    hb = get_handbook(s, name)
    stmt = select(HandbookVersion).where(HandbookVersion.handbook_id == hb.id).order_by(col(HandbookVersion.number))
    return list(s.exec(stmt).all())


def load_content(s: Session, version_id: int) -> HandbookContent:
    version = s.get(HandbookVersion, version_id)
    if version is None:
        raise NotFound(f"no handbook version with id {version_id}")
    meta = dict(version.metadata_ or {})
    c = HandbookContent(evidence_batches=version_batches(s, version_id),
                        learn_splits=tuple(meta.pop("learn_splits", None) or DEFAULT_LEARN_SPLITS), metadata=meta)
    for m in s.exec(select(Mode).where(Mode.version_id == version_id)):
        c.modes[m.name] = ModeSpec(m.name, m.description, list(m.insights))
    for k in s.exec(select(Skill).where(Skill.version_id == version_id)):
        c.skills[k.key] = SkillSpec(
            k.key, k.mode, k.name, k.description, list(k.indicators), list(k.examples), k.parent_key, dict(k.provenance)
        )
    for a in s.exec(select(Agent).where(Agent.version_id == version_id)):
        c.agents[(a.name, a.mode)] = AgentSpec(
            a.name, a.mode, a.model, a.input_price_per_m, a.output_price_per_m, a.price_source, list(a.tools),
            dict(a.profile),
        )
    for i in s.exec(select(ImportedCompetence).where(ImportedCompetence.version_id == version_id)):
        c.imported[(i.agent, i.mode, i.skill_key)] = ImportedCounts(i.agent, i.mode, i.skill_key, i.alpha, i.beta)
    # Five columns, past the arity of sqlmodel's typed select(): SQLAlchemy's, on the session's connection (the
    # reads above already flushed anything pending).
    rows = fetch_tuples(s.connection(), (
        sa_select(col(Attribution.query_id), col(Attribution.mode), col(Attribution.skill_key),
                  col(Attribution.weight), col(Attribution.attributed_by))
        .where(col(Attribution.version_id) == version_id)
    ))
    c.attributions = {(q, m, k): (w, by) for q, m, k, w, by in rows}
    return c


def load_version(s: Session, name: str, number: int | None = None) -> LoadedVersion:
    return _loaded(s, get_version(s, name, number))


def load_version_by_id(s: Session, version_id: int) -> LoadedVersion:
    version = s.get(HandbookVersion, version_id)
    if version is None:
        raise NotFound(f"no handbook version with id {version_id}")
    return _loaded(s, version)


def _loaded(s: Session, version: HandbookVersion) -> LoadedVersion:
    hb = s.get(Handbook, version.handbook_id)
    if hb is None:  # the foreign key forbids it
        raise NotFound(f"handbook {version.handbook_id} of version {version.id} is gone")
    return LoadedVersion(key(hb), hb.name, key(version), version.number, version.content_hash,
                         load_content(s, key(version)), hb.synthetic)


def latest_content(s: Session, handbook_id: int) -> tuple[HandbookVersion | None, HandbookContent]:
    """The latest version and a fresh copy of its content to edit (empty content for a new handbook)."""
    version = latest_version(s, handbook_id)
    return version, (load_content(s, key(version)) if version else HandbookContent())


def commit_version(
    s: Session,
    handbook: Handbook,
    content: HandbookContent,
    *,
    author: str,
    message: str,
    source: str = "",
    parent: HandbookVersion | None = None,
    force: bool = False,
    branch: bool = False,
) -> tuple[HandbookVersion, bool]:
    """Store `content` as the next version of `handbook`, on top of `parent`. Returns (version, created).

    `branch=True` stores a selection candidate derived from `parent` (content metadata has a "candidate" entry): it
    takes the next number but never becomes the latest version, so it needs no compare-and-set.

    A compare-and-set: when `parent` is no longer the latest version (someone committed since it was read) this
    raises Conflict naming the newer version, and writes nothing (the caller rolls back). When the content equals
    the parent's (same hash) no version is made and the parent is returned, so importing the same file twice is a
    no-op. Refuses inconsistent content.
    """
    problems = validate_content(content)
    if problems:
        raise StudioError("handbook content is inconsistent: " + "; ".join(problems[:5]))
    if branch != ("candidate" in content.metadata):
        raise StudioError("a selection candidate is committed with branch=True and a 'candidate' metadata entry")
    _take_latest(s, handbook, None if branch else parent, check=not branch)
    query_keys = {key_: ext for key_, ext in s.exec(select(Query.id, Query.ext_id)
                                                    .where(Query.handbook_id == handbook.id)) if key_ is not None}
    digest = content.content_hash(query_keys, batch_digests(s, content.evidence_batches))
    if parent is not None and parent.content_hash == digest and not force:
        return parent, False
    number = (s.exec(select(func.max(HandbookVersion.number)).where(
        HandbookVersion.handbook_id == handbook.id)).one() or 0) + 1
    version = HandbookVersion(
        handbook_id=key(handbook), number=number, parent_id=parent.id if parent else None, author=author,
        message=message, source=source, content_hash=digest,
        metadata_={**content.metadata, "learn_splits": list(content.learn_splits)},
    )
    s.add(version)
    try:
        s.flush()
    except IntegrityError as exc:  # a concurrent writer took this number first (no lock on this backend)
        raise _conflict(s, handbook, parent) from exc
    link_batches(s, key(version), content.evidence_batches)
    _insert_content(s, key(version), content)
    # Summed once here, in the same transaction: no page ever reads the version's trajectories to show it. Imported
    # here: a cold `route` loads this module and must not pay for pandas.
    from skillorchestra_core.learning.evidence_summary import store_summary, summary_of_content

    store_summary(s.connection(), key(version), summary_of_content(s.connection(), content))
    s.add(AuditLog(actor=author, action="version.create", entity="handbook_version", entity_id=version.id,
                   handbook_id=handbook.id, details={"number": number, "message": message, "source": source,
                                                     "parent": parent.number if parent else None}))
    s.flush()
    return version, True


def _take_latest(s: Session, handbook: Handbook, parent: HandbookVersion | None, check: bool = True) -> None:
    """Lock the handbook for writing and check that `parent` is still its latest version."""
    try:
        lock_for_write(s, f"handbook:{handbook.name}")
    except OperationalError as exc:  # SQLite: this transaction read a snapshot older than another writer's commit
        raise _conflict(s, handbook, parent) from exc
    latest = latest_version(s, key(handbook))
    if check and (latest.id if latest else None) != (parent.id if parent else None):
        raise _describe_conflict(handbook.name, parent, latest)


def _conflict(s: Session, handbook: Handbook, parent: HandbookVersion | None) -> Conflict:
    """Name the version that won, read on a fresh connection (this transaction's view is stale or failed)."""
    from sqlalchemy.orm import Session as PlainSession

    with PlainSession(s.get_bind().engine) as fresh:
        rows = fresh.execute(select(HandbookVersion).where(HandbookVersion.handbook_id == handbook.id)
                             .order_by(col(HandbookVersion.number).desc())).scalars().all()
        latest = next((v for v in rows if not is_candidate(v)), None)
        fresh.expunge_all()
    return _describe_conflict(handbook.name, parent, latest)


def _describe_conflict(name: str, parent: HandbookVersion | None, latest: HandbookVersion | None) -> Conflict:
    base = f"v{parent.number}" if parent else "an empty handbook"
    if latest is None:
        return Conflict(f"handbook {name!r} changed while this edit was prepared from {base}; reload and retry")
    when = latest.created_at.strftime("%Y-%m-%d %H:%M:%S") if latest.created_at else "?"
    return Conflict(f"handbook {name!r} has a newer version v{latest.number} by {latest.author} at {when} "
                    f"(this edit started from {base}); nothing was written: reload the latest version and redo it")


def _insert_content(s: Session, vid: int, c: HandbookContent) -> None:
    def bulk(table, rows: list[dict]) -> None:
        if rows:
            s.exec(insert(table), params=rows)

    bulk(Mode, [dict(version_id=vid, name=m.name, description=m.description, insights=m.insights)
                for m in c.modes.values()])
    bulk(Skill, [dict(version_id=vid, key=k.key, name=k.name, description=k.description, indicators=k.indicators,
                      examples=k.examples, mode=k.mode, parent_key=k.parent_key, provenance=k.provenance)
                 for k in c.skills.values()])
    bulk(Agent, [dict(version_id=vid, name=a.name, mode=a.mode, model=a.model,
                      input_price_per_m=a.input_price_per_m, output_price_per_m=a.output_price_per_m,
                      price_source=a.price_source, tools=a.tools, profile=a.profile) for a in c.agents.values()])
    bulk(ImportedCompetence, [dict(version_id=vid, agent=i.agent, mode=i.mode, skill_key=i.skill_key,
                                   alpha=i.alpha, beta=i.beta) for i in c.imported.values()])
    bulk(Attribution, [dict(version_id=vid, query_id=q, mode=m, skill_key=k, weight=w, attributed_by=by)
                       for (q, m, k), (w, by) in c.attributions.items()])


def summarise_handbooks(s: Session) -> list[HandbookSummary]:
    out = []
    for hb in s.exec(select(Handbook).order_by(col(Handbook.name))):
        versions = s.exec(select(HandbookVersion).where(HandbookVersion.handbook_id == hb.id)
                          .order_by(col(HandbookVersion.number))).all()
        latest = versions[-1] if versions else None

        def count(model, *where):
            return s.exec(select(func.count()).select_from(model).where(*where)).one()

        vid = latest.id if latest else -1
        out.append(HandbookSummary(
            name=hb.name, description=hb.description, synthetic=hb.synthetic, versions=len(versions),
            latest=latest.number if latest else 0, modes=count(Mode, Mode.version_id == vid),
            skills=count(Skill, Skill.version_id == vid),
            agents=count(Agent, Agent.version_id == vid),
            queries=count(Query, Query.handbook_id == hb.id),
            trajectories=count(Trajectory, Trajectory.handbook_id == hb.id),
        ))
    return out
