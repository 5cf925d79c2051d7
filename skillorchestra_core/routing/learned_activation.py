"""Learned offline activation: a skill classifier on the version's labelled train queries, calibrated on val.

Per mode, the classifier's probabilities over the skills that have labelled train queries become the weights;
skills without labelled queries get a share (`profile_share`) spread by their profile similarity. The temperature,
how many skills to keep (`top_k`, probability `mass`) and the profile share are chosen on the val queries' text and
attributions (never their outcomes): the temperature by log-loss, the rest by how closely the activated weights
reproduce the competence the attributed skills give every agent (the train-learned posterior means). Calibrated
weights are the Bayes choice for that: sum_s p(s | query) mean(A, s) is the agent's expected competence. The chosen
settings are recorded in `RoutingModel.settings["activation"][mode]`, so they travel with the routing snapshot.
All of it is vectorised over queries: one sparse product per batch.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from skillorchestra_core.routing.classifier import SkillClassifier, fit_temperature, train_classifier
from skillorchestra_core.routing.model import RoutingModel

TOP_KS = (1, 2, 3)  # the route option top_k (default 3) stays an upper bound
MASSES = (0.5, 0.7, 0.8, 0.9, 0.95, 0.99, 1.0)
PROFILE_SHARES = (0.0, 0.1, 0.25, 0.5)


@dataclass(frozen=True)
class ActivationSettings:
    temperature: float = 1.0
    top_k: int = 3
    mass: float = 0.95  # keep skills, most probable first, until their probability reaches this mass
    profile_share: float = 0.25  # weight given to skills without labelled queries (by profile similarity)
    chosen_on: str = "defaults (no val queries)"
    n_val: int = 0
    competence_error: float | None = None  # RMS gap to the attributed skills' competence on val

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "ActivationSettings":
        return cls(**{k: d[k] for k in cls.__dataclass_fields__ if k in d})


@dataclass(frozen=True)
class BatchActivation:
    """Weights (Q, L) over `skills` (the mode's leaves), each row summing to 1 or all zero (nothing known)."""

    skills: list[str]
    weights: np.ndarray
    probability: np.ndarray  # the classifier's calibrated probability (profile similarity for unlabelled skills)
    labelled: np.ndarray  # (L,) bool: the skill has labelled train queries (its weight is a probability)
    known: np.ndarray  # (Q,) bool: some word of the query is known
    source: str

    def top(self) -> np.ndarray:
        """(Q,) index into `skills` of each query's top skill, -1 when nothing is active."""
        return np.where(self.weights.max(axis=1) > 0, self.weights.argmax(axis=1), -1) if len(self.skills) else \
            np.full(self.weights.shape[0], -1)


def keep_weights(p: np.ndarray, top_k: int, mass: float) -> np.ndarray:
    """Keep each row's most probable skills until `mass` is reached (at most top_k), renormalised."""
    return _Ranked(p).keep(top_k, mass)


class _Ranked:
    """Each row's skills sorted once, so that several (top_k, mass) choices cost no further sort."""

    def __init__(self, p: np.ndarray):
        self.p = p
        if p.size:
            self.order = np.argsort(-p, axis=1, kind="stable")
            self.sorted_p = np.take_along_axis(p, self.order, axis=1)
            self.before = np.cumsum(self.sorted_p, axis=1) - self.sorted_p  # mass of the better skills
            self.total = p.sum(axis=1, keepdims=True)

    def keep(self, top_k: int, mass: float) -> np.ndarray:
        p = self.p
        if not p.size:
            return p
        keep_sorted = (self.before < mass * self.total - 1e-12) & (np.arange(p.shape[1]) < top_k) & \
            (self.sorted_p > 0)
        keep = np.zeros_like(keep_sorted)
        np.put_along_axis(keep, self.order, keep_sorted, axis=1)
        w = np.where(keep, p, 0.0)
        s = w.sum(axis=1, keepdims=True)
        return np.divide(w, s, out=np.zeros_like(w), where=s > 0)


class LearnedActivator:
    """One mode: leaves, the classifier over the labelled ones, the profile retriever for the others."""

    def __init__(self, model: RoutingModel, mode: str, profiles, classifier: SkillClassifier | None = None):
        """Trains on the model's labelled train queries, unless a trained `classifier` (from a snapshot) is given."""
        self.mode, self.profiles = mode, profiles
        self.skills = list(profiles.leaves)
        pos = {k: i for i, k in enumerate(self.skills)}
        self.classifier = classifier
        if classifier is None:
            texts, targets = _labelled(model.skill_queries, mode, pos)
            self.columns = np.flatnonzero(targets.sum(axis=0) > 0) if len(texts) else np.zeros(0, np.int64)
            if len(self.columns):
                # Every leaf labelled (common with many skills): no copy of the (n, L) targets.
                rows = targets if len(self.columns) == targets.shape[1] else targets[:, self.columns]
                rows /= rows.sum(axis=1, keepdims=True)
                self.classifier = train_classifier(texts, rows,
                                                   [self.skills[i] for i in self.columns])
        else:
            self.columns = np.array([pos[k] for k in classifier.skills], dtype=np.int64)
        self.labelled = np.zeros(len(self.skills), bool)
        self.labelled[self.columns] = True
        self.settings = self._settings(model, pos)

    def _settings(self, model: RoutingModel, pos: dict[str, int]) -> ActivationSettings:
        stored = (model.settings.get("activation") or {}).get(self.mode)
        if stored:
            return ActivationSettings.from_dict(stored)
        texts, targets = _labelled(model.val_queries, self.mode, pos)
        chosen = choose_settings(self, model.table(self.mode), texts, targets)
        model.settings.setdefault("activation", {})[self.mode] = chosen.to_dict()
        return chosen

    def scores(self, texts: list[str], temperature: float, x=None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(classifier probability (Q, L) on labelled columns, profile similarity (Q, L), known (Q,)); `x`: the
        texts' feature matrix, when already computed."""
        q, n = len(texts), len(self.skills)
        prob, known = np.zeros((q, n)), np.zeros(q, bool)
        if self.classifier is not None:
            x = self.classifier.featuriser.matrix(texts) if x is None else x
            known = self.classifier.featuriser.known_words(x)
            prob[:, self.columns] = _softmax(np.asarray(x @ self.classifier.coef) + self.classifier.intercept,
                                             temperature)
        sims = np.zeros((q, n))
        if (~self.labelled).any():
            sims[:, ~self.labelled] = self.profiles.profile_matrix(texts)[:, ~self.labelled]
            known |= sims.max(axis=1) > 0
        return prob, sims, known

    def combine(self, prob, sims, known, s: ActivationSettings) -> np.ndarray:
        return self._combine_all(prob, sims, known, s.profile_share)(s.top_k, s.mass)

    def _combine_all(self, prob, sims, known, profile_share: float):
        """combine() for one profile share, as a function of (top_k, mass): the mix and its sort are done once."""
        share = profile_share if self.classifier is not None else 1.0
        mass = sims.sum(axis=1, keepdims=True)
        prof = np.divide(sims, mass, out=np.zeros_like(sims), where=mass > 0)
        scale = np.where(mass > 0, 1.0 - share, 1.0)  # no similar unlabelled skill: the classifier gets it all
        ranked = _Ranked(prob * scale + share * prof)

        def weights(top_k: int, keep_mass: float) -> np.ndarray:
            w = ranked.keep(top_k, keep_mass)
            w[~known] = 0.0
            return w
        return weights

    def batch(self, texts: list[str], top_k: int | None = None) -> BatchActivation:
        s = self.settings
        if top_k is not None and top_k < s.top_k:
            s = ActivationSettings(**{**s.to_dict(), "top_k": max(1, top_k)})
        prob, sims, known = self.scores(texts, s.temperature)
        w = self.combine(prob, sims, known, s)
        source = "offline:classifier" if self.classifier is not None else "offline:tfidf"
        return BatchActivation(self.skills, w, np.where(self.labelled, prob, sims), self.labelled, known, source)


def choose_settings(act: LearnedActivator, table, texts: list[str], targets: np.ndarray) -> ActivationSettings:
    """Grid search on val: temperature by log-loss, then (top_k, mass, profile share) by competence error; ties
    go to the simpler setting (fewer skills, less profile)."""
    if not len(texts) or act.classifier is None:
        return ActivationSettings()
    x = act.classifier.featuriser.matrix(texts)
    logits = np.asarray(x @ act.classifier.coef) + act.classifier.intercept
    on_labelled = targets[:, act.columns].sum(axis=1) > 0
    y = targets[on_labelled][:, act.columns]
    temperature = fit_temperature(logits[on_labelled], y / y.sum(axis=1, keepdims=True))
    prob, sims, known = act.scores(texts, temperature, x)
    cols = table.indices(act.skills)
    mean = table.mean[:, cols]  # (A, L)
    truth = targets @ mean.T
    shares = PROFILE_SHARES if (~act.labelled).any() else (0.0,)
    best, best_err = None, np.inf
    for share in shares:
        weights = act._combine_all(prob, sims, known, share)
        for top_k in TOP_KS:
            for mass in MASSES:
                w = weights(top_k, mass)
                pred = np.where(w.sum(axis=1, keepdims=True) > 0, w @ mean.T, table.general)
                err = float(np.sqrt(np.mean((pred - truth) ** 2)))
                if err < best_err - 1e-12:
                    best, best_err = ActivationSettings(temperature, top_k, mass, share), err
    if best is None:  # the grids are not empty, and a finite error beats inf
        raise ValueError("no activation setting could be scored on val")
    return ActivationSettings(best.temperature, best.top_k, best.mass, best.profile_share,
                              f"val ({len(texts)} queries: text and attributions)", len(texts), round(best_err, 6))


def _labelled(queries, mode: str, pos: dict[str, int]) -> tuple[list[str], np.ndarray]:
    """Texts and (n, L) attribution weights of the queries of `mode` with weight on some leaf. Built from the
    (row, leaf, weight) triplets with one (n, L) array: with thousands of leaves, every extra copy of it costs more
    than the rest of the first use of a version."""
    texts: list[str] = []
    rows: list[int] = []
    cols: list[int] = []
    vals: list[float] = []
    for text, m, weights in queries:
        if m != mode:
            continue
        r = len(texts)
        texts.append(text)
        for k, w in weights.items():
            j = pos.get(k)
            if j is not None:
                rows.append(r)
                cols.append(j)
                vals.append(w)
    at, leaf, wt = np.asarray(rows, np.int64), np.asarray(cols, np.int64), np.asarray(vals, float)
    total = _row_sums(at, leaf, wt, len(texts), len(pos))
    some = total > 0
    if not some.any():
        return [], np.zeros((0, len(pos)))
    kept = some[at]
    dense = np.zeros((int(some.sum()), len(pos)))
    dense[(np.cumsum(some) - 1)[at[kept]], leaf[kept]] = wt[kept] / total[at[kept]]
    return [t for t, ok in zip(texts, some.tolist()) if ok], dense


def _row_sums(r: np.ndarray, c: np.ndarray, v: np.ndarray, n: int, width: int) -> np.ndarray:
    """The sums of the rows of the (n, width) array holding weights `v` at (`r`, `c`), bit for bit as that array's
    `sum(axis=1)`: a row of at most two weights sums exactly in any order, a longer one is summed as a dense row."""
    total = np.bincount(r, v, minlength=n)
    longer = np.flatnonzero(np.bincount(r, minlength=n) > 2)
    if len(longer):
        on = np.isin(r, longer)
        block = np.zeros((len(longer), width))
        block[np.searchsorted(longer, r[on]), c[on]] = v[on]
        total[longer] = block.sum(axis=1)
    return total


def _softmax(z: np.ndarray, temperature: float) -> np.ndarray:
    z = z / temperature
    z -= z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)
