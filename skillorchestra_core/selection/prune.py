"""Pruned candidates: drop the skills whose removal changes no routing decision on the split (val by default).

Greedy and exact on the candidate's own activations: the val queries are activated once; removing a skill moves its
weight to its nearest kept ancestor in the table (or drops it, the query then relying on its other skills or on the
pooled rate), and the skill goes when every (query, lambda) choice of the sweep stays the same. Least-used skills
are tried first. The pruned content is then stored and validated like any candidate (its own activation is learned
again, so its run may still differ a little).
"""

from __future__ import annotations

import numpy as np
from sqlmodel import Session

from skillorchestra_core.handbook.store import load_version
from skillorchestra_core.routing.build import routing_model
from skillorchestra_core.routing.evaluate import competence_from_weights, query_k, skill_competence
from skillorchestra_core.selection import tree
from skillorchestra_core.selection.candidates import Candidate, store_candidate
from skillorchestra_core.selection.replay import choose_grid


def removable(table, w: np.ndarray, parent: dict[str, str | None], lambdas, cost_unit: str) -> list[str]:
    """Skills of `table` whose removal (weight to the nearest kept ancestor) changes no choice at any lambda.
    With per-skill costs (the cost_scope setting) a query's cost moves with its weights, as its competence does."""
    rank = table.tie_rank
    lambdas = np.asarray(lambdas, float)

    def grid(weights: np.ndarray) -> np.ndarray:
        k = query_k(table, weights, cost_unit)
        return choose_grid(competence_from_weights(table, weights)[None], k[None] if k.ndim == 2 else k, rank,
                           lambdas)[0]

    base = grid(w)
    idx = table.skill_index
    order = sorted(table.skills, key=lambda s: (float(w[:, idx[s]].sum()), s))
    removed: set[str] = set()
    cur = w.copy()
    for s in order:
        trial = cur.copy()
        up = parent.get(s)
        while up is not None and (up in removed or up not in idx):
            up = parent.get(up)
        if up is not None:
            trial[:, idx[up]] += trial[:, idx[s]]
        trial[:, idx[s]] = 0.0
        got = grid(trial)
        if np.array_equal(got, base):
            removed.add(s)
            cur = trial
    return sorted(removed)


def pruned_candidate(s: Session, handbook: str, cand: Candidate, q_of, lambdas, *, cost_unit: str = "normalised",
                     top_k: int = 3) -> Candidate | None:
    """The pruned variant of `cand` (None when no skill can go). `q_of(model)` gives the split's queries."""
    if cand.n_skills == 0:
        return None
    model = routing_model(s, handbook, cand.version)
    q = q_of(model)
    table = model.table(q.mode)
    loaded = load_version(s, handbook, cand.version)
    _, w = skill_competence(model, q, top_k=top_k)
    gone = removable(table, w, tree.parents(loaded.content, q.mode), lambdas, cost_unit)
    if not gone:
        return None
    content = tree.reassign(loaded.content, set(gone))
    source = load_version(s, handbook, cand.version)
    return store_candidate(s, source, content, name=f"{cand.name}-pruned", kind="pruned",
                           depth_map=cand.depth_map, pruned=tuple(gone))
