"""A handbook version precomputed for routing: per mode, agents x skills arrays of posterior facts and costs.

Built once per version (versions are immutable) from the evidence through `learning.profile`, or rebuilt from an
exported snapshot (`routing.snapshot`), so routing never touches the database.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from skillorchestra_core.handbook.content import SkillSpec
from skillorchestra_core.routing.evidence_index import EvidenceIndex  # noqa: F401  (re-exported)
from skillorchestra_core.routing.utility import cost_reference, normalised_costs, tie_ranks

if TYPE_CHECKING:  # pandas is only needed to build a table, not to route with one
    import pandas as pd


@dataclass
class ModeTable:
    """Everything the routers need for one mode; rows are agents sorted by name, columns skills sorted by key."""

    mode: str
    agents: list[str]
    models: list[str]
    skills: list[str]
    mean: np.ndarray  # (A, K) posterior means
    ci_low: np.ndarray
    ci_high: np.ndarray
    alpha: np.ndarray
    beta: np.ndarray
    n: np.ndarray  # weighted evidence per (agent, skill)
    successes: np.ndarray  # S per (agent, skill): the reference code's empirical rate is S / n
    cost: np.ndarray  # (A,) mean USD per call
    cost_source: list[str]
    general: np.ndarray  # (A,) the agent's pooled rate in the mode, (S+1)/(n+2): used when no skill is active
    overall_rate: np.ndarray  # (A,) successes / attempts over all the mode's evidence (0 without evidence)
    train_rate: np.ndarray  # (A,) success rate on train queries (NaN without): the best-single baseline
    description: str = ""
    insights: list[dict] = field(default_factory=list)
    prices: list[tuple[float | None, float | None]] = field(default_factory=list)  # USD per 1M in/out tokens
    cost_n: np.ndarray | None = None  # (A,) calls behind `cost` (0 when it comes from a price card or an import)
    skill_cost: np.ndarray | None = None  # (A, K) C(A, s) USD per call (evidence.skill_costs); None: the mode cost
    skill_cost_n: np.ndarray | None = None  # (A, K) attribution-weighted calls behind skill_cost

    def __post_init__(self) -> None:
        a, k = len(self.agents), len(self.skills)
        self.cost = np.asarray(self.cost, float)
        self.cost_n = np.zeros(a) if self.cost_n is None else np.asarray(self.cost_n, float).reshape(a)
        self.skill_cost = (np.tile(self.cost[:, None], (1, k)) if self.skill_cost is None
                           else np.asarray(self.skill_cost, float).reshape(a, k))
        self.skill_cost_n = (np.zeros((a, k)) if self.skill_cost_n is None
                             else np.asarray(self.skill_cost_n, float).reshape(a, k))
        # Every skill at its agent's mode cost (no per-skill evidence): the per-query cost is the mode cost exactly
        self.uniform_cost = bool(np.array_equal(self.skill_cost, np.broadcast_to(self.cost[:, None], (a, k))))
        self.skill_index = {k: i for i, k in enumerate(self.skills)}
        self.agent_index = {a: i for i, a in enumerate(self.agents)}
        self.tie_rank = tie_ranks(self.cost, self.agents)
        with np.errstate(invalid="ignore", divide="ignore"):
            self.empirical = np.where(self.n > 0, self.successes / np.where(self.n > 0, self.n, 1.0), 0.0)
        self._k: dict[str, tuple[np.ndarray, float]] = {}

    def cached_transpose(self) -> np.ndarray:
        """mean.T as a contiguous (K, A) array, for the batch path."""
        if getattr(self, "_mt", None) is None:
            self._mt = np.ascontiguousarray(self.mean.T)
        return self._mt

    def skill_facts(self) -> np.ndarray:
        """(7, A, K) float: mean, ci_low, ci_high, alpha, beta, n and the empirical rate stacked once, so a trace's
        per-skill contributions take one gather."""
        if getattr(self, "_facts", None) is None:
            self._facts = np.stack([np.asarray(x, float) for x in (self.mean, self.ci_low, self.ci_high, self.alpha,
                                                                  self.beta, self.n, self.empirical)])
        return self._facts

    def costs_in(self, cost_unit: str) -> tuple[np.ndarray, float]:
        """(k, C_ref) for a cost unit, cached (utility.cost_reference says which agent C_ref comes from)."""
        if cost_unit not in self._k:
            self._k[cost_unit] = normalised_costs(self.cost, cost_unit, self.general, self.agents)
        return self._k[cost_unit]

    def cost_ref_agent(self, cost_unit: str) -> str | None:
        """The agent whose mean cost is C_ref (None for usd); cached, as every decision's trace names it."""
        cache = self.__dict__.setdefault("_ref_agent", {})
        if cost_unit not in cache:
            i = cost_reference(self.cost, cost_unit, self.general, self.agents)[1]
            cache[cost_unit] = None if i is None else self.agents[i]
        return cache[cost_unit]

    def query_cost(self, idx: np.ndarray, weights: np.ndarray, scope: str = "skill") -> tuple[np.ndarray, np.ndarray]:
        """(expected USD per call (A,), calls behind it (A,)) for one query's active skills: sum_s w_s C(A, s) with
        scope "skill"; the mode cost C(A) with scope "mode" or when no skill is active."""
        if scope == "skill" and len(idx) and not self.uniform_cost:
            w = np.asarray(weights, float)
            return self.skill_cost[:, idx] @ w, self.skill_cost_n[:, idx] @ w  # type: ignore[index]  # set in __post_init__
        return self.cost, self.cost_n  # type: ignore[return-value]

    def query_costs(self, weights: np.ndarray, scope: str = "skill") -> np.ndarray:
        """(Q, A) expected USD per call for (Q, K) skill weights over `skills` (rows normalised; a zero row, or
        scope "mode", costs C(A))."""
        w = np.asarray(weights, float)
        if scope != "skill" or not len(self.skills) or self.uniform_cost:
            return np.tile(self.cost, (w.shape[0], 1))
        total = w.sum(axis=1, keepdims=True)
        has = total > 0
        return np.where(has, (w / np.where(has, total, 1.0)) @ self.skill_cost.T, self.cost[None, :])  # type: ignore[union-attr]

    def normalise(self, cost_usd: np.ndarray, cost_unit: str) -> np.ndarray:
        """Costs in USD -> the router's unit (divided by C_ref, which always comes from the mode costs)."""
        c_ref = self.costs_in(cost_unit)[1]
        return np.asarray(cost_usd, float) / c_ref if c_ref > 0 else np.zeros(np.shape(cost_usd))

    def indices(self, skills: list[str]) -> np.ndarray:
        return np.fromiter((self.skill_index[s] for s in skills), dtype=np.int64, count=len(skills))


@dataclass
class PathEvidence:
    """Runs with their mode sequence: text of the run's query, path, success. The offline mode policy reads it."""

    texts: list[str]
    paths: list[str]
    success: np.ndarray  # (R,) 1.0 when the run succeeded


@dataclass
class RoutingModel:
    handbook: str
    version: int | None
    content_hash: str
    modes: dict[str, ModeTable]
    skills: dict[str, SkillSpec]
    handbook_id: int | None = None
    version_id: int | None = None
    synthetic: bool = False
    # Train-split queries with their attributions: (text, mode, {skill: weight}) for the retriever's neighbours.
    skill_queries: list[tuple[str, str, dict[str, float]]] = field(default_factory=list)
    # Val-split queries with their attributions (never their outcomes): the activation's calibration and how many
    # skills it keeps are chosen on them, then recorded in settings["activation"]. Not exported.
    val_queries: list[tuple[str, str, dict[str, float]]] = field(default_factory=list)
    paths: PathEvidence | None = None
    evidence: EvidenceIndex | None = None
    settings: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._cache: dict = {}

    @property
    def label(self) -> str:
        return f"{self.handbook} v{self.version}" if self.version is not None else self.handbook

    @property
    def mode_names(self) -> list[str]:
        return list(self.modes)

    def stored(self) -> tuple[int, int, int]:
        """(handbook id, version id, version number) of a model built from a stored version; a model built from
        files or synthetic content has none, and what needs them (storing a run of it) refuses it."""
        if self.handbook_id is None or self.version_id is None or self.version is None:
            raise ValueError(f"{self.label} is not a stored handbook version")
        return self.handbook_id, self.version_id, self.version

    def table(self, mode: str) -> ModeTable:
        try:
            return self.modes[mode]
        except KeyError:
            raise KeyError(f"{self.label} has no mode {mode!r} (modes: {', '.join(self.modes)})") from None

    def terminal_mode(self) -> str:
        """The mode that ends a run: 'answer' when present, else the last mode of the most common path."""
        if "answer" in self.modes or not self.modes:
            return "answer"
        if self.paths and self.paths.paths:
            common = Counter(self.paths.paths).most_common(1)[0][0]
            return common.split(",")[-1]
        return self.mode_names[-1]

    def cached(self, key, build):
        if key not in self._cache:
            self._cache[key] = build()
        return self._cache[key]


def mode_table_from_frames(mode: str, comp: pd.DataFrame, costs: pd.DataFrame, agents: pd.DataFrame,
                           outcomes: pd.DataFrame, pooled: pd.DataFrame, description: str = "",
                           insights: list | None = None, skill_cost: pd.DataFrame | None = None) -> ModeTable:
    """Pivot one mode's competence table (profile.competence), pooled rates (competence.pooled_rates), mode costs
    and per-skill costs (evidence.skill_costs; None: every skill costs the mode cost) into arrays."""
    names = sorted(agents.loc[agents["mode"] == mode, "agent"].unique())
    c = comp[comp["mode"] == mode]
    skills = sorted(c["skill"].unique())

    def grid(col: str, fill: float = 0.0) -> np.ndarray:
        if not skills:
            return np.zeros((len(names), 0))
        return c.pivot(index="agent", columns="skill", values=col).reindex(index=names, columns=skills) \
            .astype(float).fillna(fill).to_numpy()

    cm = costs[costs["mode"] == mode].set_index("agent").reindex(names)
    mode_cost = cm["cost"].fillna(0.0).to_numpy(float)
    sc = scn = None
    if skill_cost is not None and skills:
        per = skill_cost[skill_cost["mode"] == mode]
        sc = per.pivot(index="agent", columns="skill", values="cost").reindex(index=names, columns=skills) \
            .astype(float).to_numpy()
        sc = np.where(np.isnan(sc), mode_cost[:, None], sc)
        scn = per.pivot(index="agent", columns="skill", values="n_cost").reindex(index=names, columns=skills) \
            .astype(float).fillna(0.0).to_numpy()
    spec = agents[agents["mode"] == mode].drop_duplicates("agent").set_index("agent").reindex(names)
    model_of = spec["model"]
    prices = [(None if np.isnan(a) else float(a), None if np.isnan(b) else float(b))
              for a, b in zip(spec["input_price_per_m"].astype(float), spec["output_price_per_m"].astype(float))]
    o = outcomes[outcomes["mode"] == mode] if len(outcomes) else outcomes
    pool = pooled[pooled["mode"] == mode].drop_duplicates("agent").set_index("agent").reindex(names)
    s_all, n_all = pool["s_mode"].fillna(0.0).to_numpy(float), pool["n_mode"].fillna(0.0).to_numpy(float)
    tr = o[o["split"] == "train"] if len(o) else o
    train = (tr.groupby("agent")["score"].mean().reindex(names).to_numpy(float) if len(tr)
             else np.full(len(names), np.nan))
    with np.errstate(invalid="ignore", divide="ignore"):
        overall = np.where(n_all > 0, s_all / np.where(n_all > 0, n_all, 1.0), 0.0)
    general = pool["p"].fillna(0.5).to_numpy(float)  # the pooled rate: the score when no skill is active
    mean = grid("mean", np.nan)
    mean = np.where(np.isnan(mean), general[:, None], mean)
    return ModeTable(
        mode=mode, agents=names, models=[str(m or a) for a, m in zip(names, model_of.fillna(""))], skills=skills,
        mean=mean, ci_low=grid("ci_low"), ci_high=grid("ci_high"), alpha=grid("alpha", 1.0),
        beta=grid("beta", 1.0), n=grid("n"), successes=grid("S"), cost=mode_cost,
        cost_source=[str(x) for x in cm["cost_source"].fillna("none")], general=general,
        overall_rate=overall, train_rate=train, description=description, insights=list(insights or []),
        prices=prices, cost_n=cm["n_cost"].fillna(0.0).to_numpy(float) if "n_cost" in cm else None,
        skill_cost=sc, skill_cost_n=scn,
    )


def table_from_arrays(mode: str, agents: list[str], skills: list[str], mean, cost, *, n=None, successes=None,
                      overall_rate=None, train_rate=None, general=None, models: list[str] | None = None,
                      level: float = 0.95, skill_cost=None, skill_cost_n=None) -> ModeTable:
    """A ModeTable from plain arrays (tests, benchmarks, hand-built examples). `n` defaults to 10 attempts per
    (agent, skill) and `successes` to mean x n; alpha and beta are the flat-prior posterior of those counts and the
    interval comes from `posterior`, like every other table; `mean` is taken as given."""
    from skillorchestra_core import posterior

    mean = np.asarray(mean, float).reshape(len(agents), len(skills))
    n = np.full(mean.shape, 10.0) if n is None else np.asarray(n, float).reshape(mean.shape)
    s = mean * n if successes is None else np.asarray(successes, float).reshape(mean.shape)
    alpha, beta = posterior.posterior_params(s, n - s, *posterior.flat_prior(mean.shape))
    ci_low, ci_high = posterior.credible_interval(alpha, beta, level)
    cost = np.asarray(cost, float)
    overall = np.asarray(overall_rate, float) if overall_rate is not None else (
        s.sum(1) / np.maximum(n.sum(1), 1e-12))
    return ModeTable(
        mode=mode, agents=list(agents), models=list(models or agents), skills=list(skills), mean=mean,
        ci_low=ci_low, ci_high=ci_high, alpha=alpha, beta=beta, n=n, successes=s, cost=cost,
        cost_source=["given"] * len(agents),
        general=np.asarray(general, float) if general is not None else mean.mean(1) if len(skills) else
        np.full(len(agents), 0.5), overall_rate=overall,
        train_rate=np.asarray(train_rate, float) if train_rate is not None else np.full(len(agents), np.nan),
        skill_cost=skill_cost, skill_cost_n=skill_cost_n)
