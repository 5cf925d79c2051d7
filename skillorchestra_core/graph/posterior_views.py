"""Read models of the Posteriors page: forest rows, Beta density curves, the agent x skill matrix, the evidence
behind one (agent, skill) cell, and how the reference code's empirical rate (0 when unseen) compares."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from sqlalchemy import select
from sqlmodel import Session, col

from skillorchestra_core import posterior
from skillorchestra_core.db.models import Query
from skillorchestra_core.evidence.reader import read_outcomes
from skillorchestra_core.graph.service import VersionData
from skillorchestra_core.learning.competence import ancestor_pairs

MEAN, EMPIRICAL = "mean", "empirical"
SCORES = {MEAN: "posterior mean", EMPIRICAL: "empirical rate (reference code: 0 when unseen)"}


def skill_names(data: VersionData) -> dict[str, str]:
    return {k: (s.name or k) for k, s in data.loaded.content.skills.items()}


def agent_names(data: VersionData) -> list[str]:
    return sorted(data.competence["agent"].unique().tolist())


def default_skills(data: VersionData, agents: list[str], limit: int = 20) -> list[str]:
    """The skills with the most evidence for the chosen agents, in key order (tree order for dotted keys)."""
    comp = data.competence[data.competence["agent"].isin(agents)] if agents else data.competence
    if comp.empty:
        return []
    top = comp.groupby("skill")["n"].sum().sort_values(ascending=False, kind="stable").head(limit)
    return sorted(top.index.tolist())


def default_agents(data: VersionData, limit: int = 4) -> list[str]:
    """The agents with the highest mean competence across skills."""
    comp = data.competence
    if comp.empty:
        return []
    return comp.groupby("agent")["mean"].mean().sort_values(ascending=False).head(limit).index.tolist()


def score_columns(comp: pd.DataFrame, score: str) -> pd.DataFrame:
    """Adds x, lo, hi, unseen: the posterior mean with its interval, or the reference code's empirical rate (0 where
    there is no evidence, no interval)."""
    if score not in SCORES:
        raise ValueError(f"score must be one of {sorted(SCORES)}, got {score!r}")
    out = comp.copy()
    out["unseen"] = out["n"] <= 0
    if score == MEAN:
        out["x"], out["lo"], out["hi"] = out["mean"], out["ci_low"], out["ci_high"]
    else:
        rate = out["empirical_rate"].astype(float).fillna(0.0)
        out["x"], out["lo"], out["hi"] = rate, rate, rate
    return out


def forest_rows(data: VersionData, agents: list[str], skills: list[str], score: str = MEAN) -> pd.DataFrame:
    comp = data.competence[data.competence["agent"].isin(agents) & data.competence["skill"].isin(skills)]
    out = score_columns(comp, score)
    out["name"] = out["skill"].map(skill_names(data))
    order = {k: i for i, k in enumerate(skills)}
    out = out.assign(_o=out["skill"].map(order)).sort_values(["_o", "agent"], kind="stable").drop(columns="_o")
    return out[["agent", "mode", "skill", "name", "x", "lo", "hi", "mean", "ci_low", "ci_high", "n",
                "empirical_rate", "unseen", "basis", "alpha", "beta"]].reset_index(drop=True)


def density_curves(data: VersionData, skill: str, agents: list[str], points: int = 301) -> pd.DataFrame:
    """Long table agent, x, pdf of each agent's Beta posterior on `skill`."""
    comp = data.competence[(data.competence["skill"] == skill) & data.competence["agent"].isin(agents)]
    xs = np.linspace(0.0005, 0.9995, points)
    parts = [pd.DataFrame({"agent": r.agent, "x": xs, "pdf": posterior.beta_pdf(xs, r.alpha, r.beta)})
             for r in comp.itertuples()]
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=["agent", "x", "pdf"])


def heatmap_frames(data: VersionData, agents: list[str], skills: list[str], score: str = MEAN):
    """(z, n): agent x skill matrices of the score and of the evidence n, rows and columns in the given order."""
    comp = score_columns(data.competence[data.competence["agent"].isin(agents)
                                         & data.competence["skill"].isin(skills)], score)
    z = comp.pivot_table(index="agent", columns="skill", values="x", aggfunc="first")
    n = comp.pivot_table(index="agent", columns="skill", values="n", aggfunc="first")
    rows = [a for a in agents if a in z.index]
    cols = [k for k in skills if k in z.columns]
    return z.reindex(index=rows, columns=cols), n.reindex(index=rows, columns=cols)


@dataclass(frozen=True)
class UnseenSummary:
    cells: int  # (agent, skill) pairs of the shown skills with no evidence
    total: int
    mean_posterior: float  # what the posterior says on them on average (the agent's pooled ability, by default)


def unseen_summary(data: VersionData, skills: list[str] | None = None,
                   agents: list[str] | None = None) -> UnseenSummary:
    """Over the cells shown: the chosen agents x the chosen skills (None: all), pairs in the same mode only."""
    comp = data.competence if skills is None else data.competence[data.competence["skill"].isin(skills)]
    comp = comp if agents is None else comp[comp["agent"].isin(agents)]
    unseen = comp[comp["n"] <= 0]
    mean = float(unseen["mean"].mean()) if len(unseen) else math.nan
    return UnseenSummary(len(unseen), len(comp), mean)


@dataclass(frozen=True)
class EvidencePage:
    rows: pd.DataFrame
    total: int
    page: int
    pages: int
    successes: float  # S over all rows (not only this page)
    failures: float
    by_source: dict | None = None  # trajectory source (import, feedback, ...) -> {"S", "F", "n"} over all rows


EVIDENCE_COLUMNS = ["query", "text", "split", "task", "weight", "score", "S", "F", "cost_usd", "prompt_tokens",
                    "completion_tokens", "source", "attributed_by"]


def evidence_rows(s: Session, data: VersionData, agent: str, skill: str) -> pd.DataFrame:
    """The agent's learn-split trajectories on queries attributed to `skill` or one of its descendants, with their
    weight: the rows behind the cell's S and F (only this agent's trajectories are read)."""
    f = data.frames
    spec = data.loaded.content.skills.get(skill)
    if spec is None or f.attributions.empty:
        return pd.DataFrame(columns=[*EVIDENCE_COLUMNS, "trajectory_id", "query_id"])
    pairs = ancestor_pairs(f.skills)
    subtree = set(pairs.loc[pairs["target"] == skill, "skill"]) | {skill}
    att = f.attributions[f.attributions["skill"].isin(subtree) & (f.attributions["mode"] == spec.mode)]
    att = att.groupby(["query_id", "mode"], as_index=False).agg(
        weight=("weight", "sum"), attributed_by=("attributed_by", lambda s: ", ".join(sorted(set(s)))))
    mine = read_outcomes(s.connection(), data.loaded.content.evidence_batches, agent=agent, mode=spec.mode)
    out = mine[mine["split"].isin(data.summary.learn_splits)].merge(att, on=["query_id", "mode"])
    out = out.assign(S=out["weight"] * out["score"], F=out["weight"] * (1.0 - out["score"]))
    return out.rename(columns={"ext_id": "query"}).sort_values("trajectory_id", kind="stable").reset_index(drop=True)


def evidence_page(s: Session, data: VersionData, agent: str, skill: str, page: int = 1,
                  page_size: int = 20) -> EvidencePage:
    rows = evidence_rows(s, data, agent, skill)
    total = len(rows)
    pages = max(1, math.ceil(total / page_size))
    page = min(max(1, page), pages)
    chunk = rows.iloc[(page - 1) * page_size: page * page_size].copy()
    ids = [int(q) for q in chunk["query_id"]] if total else []
    found = (s.connection().execute(select(col(Query.id), col(Query.text)).where(col(Query.id).in_(ids))).all()
             if ids else [])
    texts: dict[int, str] = {i: t for i, t in found if i is not None}
    chunk["text"] = chunk["query_id"].map(texts) if total else []
    for name in EVIDENCE_COLUMNS:
        if name not in chunk:
            chunk[name] = None
    return EvidencePage(chunk[EVIDENCE_COLUMNS].reset_index(drop=True), total, page, pages,
                        float(rows["S"].sum()) if total else 0.0, float(rows["F"].sum()) if total else 0.0,
                        source_breakdown(rows))


def source_breakdown(rows: pd.DataFrame) -> dict:
    """S, F and trajectories per evidence source, so live feedback shows apart from imported evidence."""
    if rows.empty:
        return {}
    g = rows.groupby("source")[["S", "F"]].sum().join(rows.groupby("source").size().rename("n"))
    return {str(k): {"S": float(v["S"]), "F": float(v["F"]), "n": int(v["n"])} for k, v in g.iterrows()}
