"""`refine`, `review`, `versions`, `diff`, `restore` and `members` commands: refinement review from the shell.

`--as WHO` names the person acting (default: the login name); roles are enforced in core.
"""

from __future__ import annotations

import getpass

import typer

from skillorchestra_core.cli.common import db_session, echo_json
from skillorchestra_core.errors import StudioError

review_app = typer.Typer(no_args_is_help=True, help="Review refinement candidates.")
members_app = typer.Typer(no_args_is_help=True, help="Members and roles (viewer, reviewer, admin).")


def _me() -> str:
    try:
        return getpass.getuser()
    except Exception:  # no login name (some containers)
        return "cli"


AS = typer.Option(None, "--as", help="Who is acting (default: the login name)")


def register(app: typer.Typer) -> None:
    app.command("refine")(refine)
    app.add_typer(review_app, name="review")
    app.command("versions")(versions)
    app.command("diff")(diff)
    app.command("restore")(restore)
    app.add_typer(members_app, name="members")


def _line(c) -> str:
    proposal = {"ok": f"proposal: {c.proposal.source}" if c.proposal else "", "failed": "proposal FAILED",
                "none": "no proposal"}[c.proposal_status]
    decided = f" by {c.decided_by}" if c.decided_by else ""
    return (f"#{c.id} [{c.status}{decided}] {c.kind} {' + '.join(c.skills)} on v{c.version} "
            f"({c.detector}, statistic {c.statistic:.2f}) {proposal}")


def refine(
    name: str = typer.Argument(..., help="Handbook name"),
    action: str = typer.Argument(..., help="detect or propose"),
    detector: str = typer.Option("bayes", "--detector", help="bayes (Bayes factors) or reference (the reference "
                                                             "code's rules, for comparison)"),
    seed: int = typer.Option(0, "--seed", help="Seed of the text grouping"),
    as_json: bool = typer.Option(False, "--json"),
    who: str = AS,
) -> None:
    """Detect split/merge candidates on the latest version, or propose revised skills for pending candidates."""
    from skillorchestra_core.refinement.store import list_candidates

    if action not in ("detect", "propose"):
        raise StudioError(f"unknown refine action {action!r}; use detect or propose")
    with db_session() as s:
        if action == "detect":
            from skillorchestra_core.refinement.run import detect_and_store

            ids = set(detect_and_store(s, name, detector, seed, actor=who or _me()))
        else:
            from skillorchestra_core.llm import client_from_settings
            from skillorchestra_core.refinement.proposing import propose

            client = client_from_settings()
            ids = {c.id for c in list_candidates(s, name, "pending") if c.proposal_status != "ok"}
            for cid in sorted(ids):
                propose(s, cid, client)
        views = [c for c in list_candidates(s, name) if c.id in ids]
    if as_json:
        echo_json({"handbook": name, "action": action, "candidates": [c.as_json() for c in views]})
        return
    if not views:
        typer.echo("no candidates" if action == "detect" else "nothing to propose")
    for c in views:
        typer.echo(_line(c) + (f": {c.proposal_error}" if c.proposal_status == "failed" else ""))


@review_app.command("list")
def review_list(
    handbook: str = typer.Option(None, "--handbook", help="Only this handbook"),
    status: str = typer.Option(None, "--status", help="pending, approved, edited, rejected or superseded"),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """List refinement candidates (all handbooks unless --handbook)."""
    from skillorchestra_core.refinement.store import list_candidates

    with db_session() as s:
        views = list_candidates(s, handbook, status)
        s.commit()  # keep any carry-forward / supersession the listing did
    if as_json:
        echo_json([c.as_json() for c in views])
        return
    for c in views:
        typer.echo(f"{c.handbook} " + _line(c))
    if not views:
        typer.echo("no candidates; run `skillorchestra refine NAME detect`")


@review_app.command("approve")
def review_approve(candidate_id: int = typer.Argument(...), who: str = AS) -> None:
    """Approve a candidate: its proposal (else the offline proposal) becomes a new handbook version."""
    from skillorchestra_core.refinement.review import approve

    with db_session() as s:
        typer.echo(approve(s, candidate_id, who or _me()).message)


@review_app.command("reject")
def review_reject(candidate_id: int = typer.Argument(...),
                  reason: str = typer.Option(..., "--reason", help="Why (kept in the audit log)"),
                  who: str = AS) -> None:
    """Reject a candidate with a reason."""
    from skillorchestra_core.refinement.review import reject

    with db_session() as s:
        typer.echo(reject(s, candidate_id, who or _me(), reason).message)


def versions(name: str = typer.Argument(...), as_json: bool = typer.Option(False, "--json")) -> None:
    """List a handbook's versions: number, parent, author, when, message."""
    from skillorchestra_core.refinement.history import version_rows

    with db_session() as s:
        rows = version_rows(s, name)
    if as_json:
        echo_json([vars(r) for r in rows])
        return
    for r in rows:
        parent = f" (from v{r.parent})" if r.parent else ""
        typer.echo(f"v{r.number}{parent} {r.created_at:%Y-%m-%d %H:%M} {r.author}: {r.message} "
                   f"[{r.skills} skills, {r.content_hash[:12]}]")


def diff(name: str = typer.Argument(...), v1: int = typer.Argument(...), v2: int = typer.Argument(...),
         lam: float = typer.Option(None, "--lambda", help="Cost weight for the routing comparison"),
         as_json: bool = typer.Option(False, "--json")) -> None:
    """Diff two versions: skills added/removed/changed, posteriors that moved, routing changes on val queries."""
    from skillorchestra_core.refinement.diff import diff_versions

    with db_session() as s:
        d = diff_versions(s, name, v1, v2, lam)
    if as_json:
        echo_json(d.as_json())
        return
    typer.echo(f"{d.handbook} {d.before} -> {d.after}")
    for k in d.skills_added:
        typer.echo(f"  + {k['key']}: {k['name']}")
    for k in d.skills_removed:
        typer.echo(f"  - {k['key']}: {k['name']}")
    for k in d.skills_changed:
        typer.echo(f"  ~ {k['key']}: {', '.join(k['fields'])}")
    typer.echo(f"  {len(d.posteriors)} posterior mean(s) moved" + "".join(
        f"\n    {p['agent']} {p['skill']}: {p['before']:.3f} -> {p['after']:.3f}" for p in d.posteriors[:10]))
    typer.echo(f"  routing changed on {len(d.routing)} of {d.val_queries} val queries (lambda {d.lam})")


def restore(name: str = typer.Argument(...), version: int = typer.Argument(...), who: str = AS) -> None:
    """Restore an older version's content as a new version."""
    from skillorchestra_core.refinement.history import restore_version

    with db_session() as s:
        number = restore_version(s, name, version, who or _me())
    typer.echo(f"{name}: restored v{version} as v{number}")


@members_app.command("add")
def members_add(name: str = typer.Argument(...),
                role: str = typer.Option("reviewer", "--role", help="viewer, reviewer or admin"),
                who: str = typer.Option(None, "--as", help="Acting admin (checked when given)")) -> None:
    """Register NAME with a role (or change it). Once anyone is registered, roles are enforced."""
    from skillorchestra_core.refinement.roles import add_member

    with db_session() as s:
        add_member(s, name, role, who)
        s.commit()
    typer.echo(f"{name}: {role}")


@members_app.command("list")
def members_list(as_json: bool = typer.Option(False, "--json")) -> None:
    from skillorchestra_core.refinement.roles import list_members

    with db_session() as s:
        rows = list_members(s)
    if as_json:
        echo_json([{"name": n, "role": r} for n, r in rows])
        return
    for n, r in rows:
        typer.echo(f"{n}: {r}")
    if not rows:
        typer.echo("no members: open mode (every named person may decide)")
