"""One call for the CLI and the Pareto page: candidates -> replay runs -> frontier -> selection."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from sqlmodel import Session

from skillorchestra_core.db.models import key
from skillorchestra_core.handbook.store import get_handbook
from skillorchestra_core.selection import pareto
from skillorchestra_core.selection.candidates import Candidate, as_candidate, depth_candidates, source_version
from skillorchestra_core.selection.prune import pruned_candidate
from skillorchestra_core.selection.runs import RunRecord, list_runs
from skillorchestra_core.selection.sweep import SweepOptions, queries_of, run_sweep

# Need what a new query does not carry (its recorded outcomes; its attributed skills): upper bounds, never on the
# frontier.
NOT_DEPLOYABLE = ("oracle", "true-label")


@dataclass
class Selection:
    handbook: str
    source_version: int
    split: str
    objective_lambda: float
    candidates: list[Candidate]
    runs: list[RunRecord]
    frontier: list[RunRecord]
    selected: RunRecord | None
    selected_by_lambda: dict[float, RunRecord | None] = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {
            "handbook": self.handbook, "source_version": self.source_version, "split": self.split,
            "objective_lambda": self.objective_lambda, "candidates": [c.to_dict() for c in self.candidates],
            "runs": [r.to_dict() for r in self.runs], "frontier": [r.to_dict() for r in self.frontier],
            "selected": self.selected.to_dict() if self.selected else None,
            "selected_by_lambda": [{"lambda": lam, "run": r.to_dict() if r else None}
                                   for lam, r in self.selected_by_lambda.items()],
        }


def generate_candidates(s: Session, handbook: str, source: int | None, opts: SweepOptions,
                        prune: bool = True) -> list[Candidate]:
    """Depth-map candidates of the source version plus their pruned variants (one per distinct skill set)."""
    src = source_version(s, handbook, source)
    out = depth_candidates(s, src)
    if prune:
        mode = opts.mode

        def q_of(model):
            m = mode or (model.mode_names[0] if len(model.modes) == 1 else model.terminal_mode())
            return queries_of(s, model, opts.split, m)
        for cand in list(out):
            p = pruned_candidate(s, handbook, cand, q_of, opts.lambdas, cost_unit=opts.cost_unit, top_k=opts.top_k)
            if p is not None and all(p.version != c.version for c in out):
                out.append(p)
    return out


def resolve_candidates(s: Session, handbook: str, spec: str, source: int | None, opts: SweepOptions) -> list[Candidate]:
    """`auto`: generate (or find) the candidates of the source; `none`: the source alone; else version numbers."""
    spec = (spec or "auto").strip()
    if spec == "auto":
        return generate_candidates(s, handbook, source, opts)
    if spec == "none":
        return [as_candidate(s, handbook, source_version(s, handbook, source).number)]
    try:
        numbers = [int(x) for x in spec.split(",") if x.strip()]
    except ValueError:
        raise ValueError(f"--candidates expects auto, none or version numbers like 1,3,4; got {spec!r}") from None
    return [as_candidate(s, handbook, n) for n in numbers]


def selectable(r: RunRecord, router: str = "skill") -> bool:
    return not r.baseline and r.router == router and r.accuracy is not None


def summarise(runs: list[RunRecord], objective_lambdas, objective_lambda: float, router: str = "skill"
              ) -> tuple[list[RunRecord], RunRecord | None, dict]:
    """(frontier over every deployable run, the run selected at `objective_lambda`, the selection per lambda)."""
    pool = [r for r in runs if r.router not in NOT_DEPLOYABLE and r.accuracy is not None]
    mask = pareto.frontier([r.normalised_cost if r.normalised_cost is not None else r.mean_cost_usd for r in pool],
                           [r.accuracy for r in pool])
    front = sorted((r for r, k in zip(pool, mask) if k), key=lambda r: (r.cost, -(r.accuracy or 0.0)))
    cands = [r for r in runs if selectable(r, router)]

    def pick(lam: float) -> RunRecord | None:
        if not cands:
            return None
        i = pareto.select([r.accuracy for r in cands], [_norm(r) for r in cands], [r.n_skills for r in cands], lam)
        return None if i is None else cands[i]
    return front, pick(objective_lambda), {float(lam): pick(float(lam)) for lam in objective_lambdas}


def _norm(r: RunRecord) -> float:
    return r.normalised_cost if r.normalised_cost is not None else float(r.mean_cost_usd or np.nan)


def select(s: Session, handbook: str, opts: SweepOptions, *, candidates: str = "auto", source: int | None = None,
           objective_lambda: float | None = None, actor: str = "system") -> Selection:
    from skillorchestra_core.settings import get_settings

    lam = get_settings().default_lambda if objective_lambda is None else float(objective_lambda)
    cands = resolve_candidates(s, handbook, candidates, source, opts)
    runs = run_sweep(s, handbook, cands, opts, actor=actor)
    front, chosen, by_lam = summarise(runs, opts.lambdas, lam, opts.routers[0])
    src = source_version(s, handbook, source).number
    return Selection(handbook, src, opts.split, lam, cands, runs, front, chosen, by_lam)


def stored_runs(s: Session, handbook: str, split: str | None = None) -> list[RunRecord]:
    return list_runs(s, key(get_handbook(s, handbook)), split=split)
