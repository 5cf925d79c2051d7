"""Recorded outcomes for replay and the oracle, held as sorted numpy arrays (no per-row Python objects).

One outcome per (query, mode, agent): the key is packed into one int64, `(query_id * n_modes + mode) * n_agents +
agent`, and a lookup is a binary search. Built from a trajectory frame with vectorised operations in `from_frame`;
the text -> query id maps are built on first use (most processes route a query or two, not thousands).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Iterator, Mapping

import numpy as np

Outcome = tuple[float, "float | None", int]  # (score, cost in USD or None, trajectory id)


def normalise_text(text: str) -> str:
    return " ".join(text.split()).lower()


_SPACES = re.compile(r"\s+")  # str.split()'s whitespace (both use Py_UNICODE_ISSPACE)
_AROUND = re.compile(" ?\x00 ?")


def normalise_texts(texts: list[str]) -> list[str]:
    """[normalise_text(t) for t in texts], done on one joined string (a few C passes instead of 4 calls a text).
    NUL, the separator, is neither space nor cased, so every text is treated as if alone (even a final sigma)."""
    joined = "\x00".join(texts)
    if joined.count("\x00") != max(len(texts) - 1, 0):  # a text holding NUL itself: one by one
        return [normalise_text(t) for t in texts]
    out = _AROUND.sub("\x00", _SPACES.sub(" ", joined)).strip(" ").lower().split("\x00")
    return out if texts else []


def _codes(values) -> tuple[list[str], np.ndarray]:
    """(sorted vocabulary, code of each value): a hash factorisation, far faster than sorting strings."""
    import pandas as pd  # build time only

    series = values if isinstance(values, pd.Series) else pd.Series(values, dtype=object)
    codes, uniques = pd.factorize(series, sort=True)
    return [str(u) for u in uniques], codes.astype(np.int64)


@dataclass
class EvidenceIndex:
    """Which queries are in the evidence (ids, external ids, texts) and what each agent scored on them."""

    query_ids: np.ndarray  # (Q,) stored query ids
    ext_ids: list[str]  # (Q,) external ids
    texts: list[str]  # (Q,) normalised texts
    modes: list[str]  # mode vocabulary of the packed keys
    agents: list[str]  # agent vocabulary of the packed keys
    keys: np.ndarray  # (N,) sorted packed (query, mode, agent) keys
    score: np.ndarray  # (N,)
    cost: np.ndarray  # (N,) NaN when unknown
    trajectory: np.ndarray  # (N,) trajectory ids
    _maps: dict = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_frame(cls, query_ids, ext_ids, texts, qid, mode, agent, score, cost, trajectory,
                   preferred) -> "EvidenceIndex":
        """One outcome per (query, mode, agent): the `preferred` rows first (imported evidence), then the lowest
        trajectory id. All arguments are array-likes of equal length per group (queries, then trajectories)."""
        modes, m = _codes(mode)
        agents, a = _codes(agent)
        packed = (np.asarray(qid, np.int64) * len(modes) + m) * max(len(agents), 1) + a
        trajectory = np.asarray(trajectory, np.int64)
        order = np.lexsort((trajectory, ~np.asarray(preferred, bool)))
        keys, first = np.unique(packed[order], return_index=True)
        rows = order[first]
        return cls(np.asarray(query_ids, np.int64), [str(e) for e in ext_ids],
                   normalise_texts([str(t) for t in texts]), modes, agents, keys,
                   np.asarray(score, float)[rows], np.asarray(cost, float)[rows], trajectory[rows])

    # -- queries -----------------------------------------------------------------------------------------------
    def _map(self, name: str) -> dict:
        if name not in self._maps:
            ids = self.query_ids.tolist()
            self._maps[name] = {"by_text": lambda: dict(zip(self.texts, ids)),
                                "by_ref": lambda: dict(zip(self.ext_ids, ids)),
                                "refs": lambda: dict(zip(ids, self.ext_ids))}[name]()
        return self._maps[name]

    @property
    def by_text(self) -> dict[str, int]:
        return self._map("by_text")

    @property
    def by_ref(self) -> dict[str, int]:
        return self._map("by_ref")

    @property
    def refs(self) -> dict[int, str]:
        return self._map("refs")

    def lookup(self, query: str) -> int | None:
        """The stored query id of a query text (whitespace and case ignored), else of an external id."""
        q = query.strip()
        return self.by_text.get(normalise_text(q), self.by_ref.get(q))

    # -- outcomes ----------------------------------------------------------------------------------------------
    def _key(self, qid: int, mode: str, agent: str) -> int | None:
        try:
            m, a = self.modes.index(mode), self.agents.index(agent)
        except ValueError:
            return None
        return (int(qid) * len(self.modes) + m) * max(len(self.agents), 1) + a

    def _row(self, qid: int, mode: str, agent: str) -> int | None:
        key = self._key(qid, mode, agent)
        if key is None or not len(self.keys):
            return None
        i = int(np.searchsorted(self.keys, key))
        return i if i < len(self.keys) and int(self.keys[i]) == key else None

    def _outcome(self, i: int) -> Outcome:
        c = float(self.cost[i])
        return float(self.score[i]), None if np.isnan(c) else c, int(self.trajectory[i])

    def outcome(self, qid: int, mode: str, agent: str) -> Outcome | None:
        """(score, cost or None, trajectory id) of `agent` on a query in `mode`, or None when not recorded."""
        i = self._row(qid, mode, agent)
        return None if i is None else self._outcome(i)

    def recorded(self, qid: int, mode: str, agents: list[str]) -> dict[str, Outcome]:
        found = {a: self.outcome(qid, mode, a) for a in agents}
        return {a: o for a, o in found.items() if o is not None}

    def without(self, qid: int, mode: str, agent: str) -> "EvidenceIndex":
        """A copy with one recorded outcome removed (what-if analyses and tests)."""
        i = self._row(qid, mode, agent)
        if i is None:
            return self
        keep = np.arange(len(self.keys)) != i
        return EvidenceIndex(self.query_ids, self.ext_ids, self.texts, self.modes, self.agents, self.keys[keep],
                             self.score[keep], self.cost[keep], self.trajectory[keep])

    @property
    def outcomes(self) -> "OutcomeView":
        return OutcomeView(self)

    def __len__(self) -> int:
        return len(self.keys)


class OutcomeView(Mapping):
    """Read-only `(query id, mode, agent) -> (score, cost, trajectory)` mapping over the arrays."""

    def __init__(self, index: EvidenceIndex):
        self._index = index

    def __getitem__(self, key) -> Outcome:
        hit = self._index.outcome(*key)
        if hit is None:
            raise KeyError(key)
        return hit

    def __len__(self) -> int:
        return len(self._index)

    def __iter__(self) -> Iterator[tuple[int, str, str]]:
        ix = self._index
        n_m, n_a = len(ix.modes), max(len(ix.agents), 1)
        for key in ix.keys.tolist():
            rest, a = divmod(key, n_a)
            q, m = divmod(rest, n_m)
            yield q, ix.modes[m], ix.agents[a]
