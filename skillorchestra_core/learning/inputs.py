"""What learning reads from the database, read once and then let go (the learning transaction stays short).

Only the version's learn-split queries bring text and outcomes. Held-out (val/test) query text is read separately and
only ever handed to the offline classifier that attributes held-out queries for evaluation; nothing learned sees it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from sqlmodel import Session, col, select

from skillorchestra_core.db.models import Query, Trajectory
from skillorchestra_core.handbook.store import LoadedVersion, load_version
from skillorchestra_core.learning import profile

SUCCESS = 0.5  # a score at or above this counts as a success when contrasting trajectories


@dataclass(frozen=True)
class LearnInputs:
    loaded: LoadedVersion
    frames: profile.VersionFrames
    texts: dict[int, str]  # learn-split query id -> text
    ext_ids: dict[int, str]  # learn-split query id -> external id
    heldout_texts: dict[int, str]  # val/test query id -> text: for attributing held-out queries by text only
    responses: dict[tuple[int, str], dict[str, str]] | None = None  # (train query, mode) -> {agent: output}

    @property
    def modes(self) -> list[str]:
        return list(self.loaded.content.modes)

    def outcomes(self, mode: str) -> pd.DataFrame:
        o = self.frames.outcomes
        return o[o["mode"] == mode]

    def outputs(self, query_id: int, mode: str) -> dict[str, str]:
        """agent -> recorded output on this train query in `mode` (empty when none was recorded)."""
        return (self.responses or {}).get((query_id, mode), {})

    def heldout_ids(self, mode: str) -> list[int]:
        """Val/test queries with evidence in `mode` (their outcomes are never read here, only which exist)."""
        e = self.frames.evidence
        ids = e.loc[(e["mode"] == mode) & ~e["split"].isin(self.frames.learn_splits), "query_id"].unique()
        return sorted(int(q) for q in ids if int(q) in self.heldout_texts)

    def score_matrix(self, mode: str, query_ids: list[int]) -> tuple[np.ndarray, list[str]]:
        """(queries x agents) recorded scores in `mode` (NaN where an agent has no attempt) and the agent names."""
        o = self.outcomes(mode)
        piv = o.pivot_table(index="query_id", columns="agent", values="score", aggfunc="mean")
        piv = piv.reindex(index=query_ids)
        return piv.to_numpy(dtype=float), [str(a) for a in piv.columns]

    def contrast(self, mode: str) -> pd.DataFrame:
        """Per train query of the mode: who succeeded and who failed (tau+ and tau-); `mixed` when both exist."""
        o = self.outcomes(mode).assign(ok=lambda d: d["score"] >= SUCCESS)
        g = o.groupby("query_id")
        out = pd.DataFrame({
            "succeeded": g.apply(lambda d: sorted(d.loc[d["ok"], "agent"]), include_groups=False),
            "failed": g.apply(lambda d: sorted(d.loc[~d["ok"], "agent"]), include_groups=False),
        })
        out["mixed"] = out["succeeded"].map(bool) & out["failed"].map(bool)
        return out


def read_inputs(s: Session, name: str, version: int | None = None) -> LearnInputs:
    loaded = load_version(s, name, version)
    frames = profile.load_frames(s, loaded)
    learn_ids = sorted(int(q) for q in frames.outcomes["query_id"].unique())
    rows = s.exec(select(col(Query.id), col(Query.ext_id), col(Query.text), col(Query.split))
                  .where(Query.handbook_id == loaded.handbook_id)).all()
    learn = set(learn_ids)
    texts = {int(q): str(t) for q, _e, t, _sp in rows if q in learn}
    ext_ids = {int(q): str(e) for q, e, _t, _sp in rows if q in learn}
    held = {int(q): str(t) for q, _e, t, sp in rows
            if q is not None and q not in learn and sp not in frames.learn_splits}
    return LearnInputs(loaded, frames, texts, ext_ids, held, _responses(s, frames))


def _responses(s: Session, frames: profile.VersionFrames) -> dict[tuple[int, str], dict[str, str]]:
    """The recorded outputs of the learn-split trajectories (what tau+ and tau- actually said), where recorded."""
    ids = [int(t) for t in frames.outcomes["trajectory_id"]]
    out: dict[tuple[int, str], dict[str, str]] = {}
    for start in range(0, len(ids), 5000):
        rows = s.exec(select(col(Trajectory.query_id), col(Trajectory.mode), col(Trajectory.agent),
                             col(Trajectory.response))
                      .where(col(Trajectory.id).in_(ids[start:start + 5000]),
                             col(Trajectory.response).is_not(None))).all()
        for q, m, a, r in rows:
            if r:
                out.setdefault((int(q), m), {})[a] = r
    return out
