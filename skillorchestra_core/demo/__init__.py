"""Synthetic demo handbooks made by the project from a fixed seed (not real model outcomes)."""

from __future__ import annotations

from sqlmodel import Session, select

from skillorchestra_core.db.models import Handbook
from skillorchestra_core.demo import agents, qa
from skillorchestra_core.handbook.delete import delete_handbook

SEED = 20260219
BUILDERS = {qa.NAME: qa.build, agents.NAME: agents.build}


def build_demo(s: Session, force: bool = False, seed: int = SEED) -> dict[str, str]:
    """Create demo-qa and demo-agents; existing ones are kept unless `force`. Returns name -> what happened."""
    done = {}
    for name, build in BUILDERS.items():
        exists = s.exec(select(Handbook).where(Handbook.name == name)).first() is not None
        if exists and not force:
            done[name] = "already present (use --force to rebuild)"
            continue
        if exists:
            delete_handbook(s, name, actor="demo")
        result = build(s, seed)
        done[name] = (f"built v{result.version}: {result.queries_added} queries, "
                      f"{result.trajectories_added} trajectories (synthetic)")
    return done
