"""Large synthetic evidence for benchmarks, written straight into the tables (Core executemany), not through the
importers: N queries x A agents trajectories, one task skill per query, all in one evidence batch, and one version
that lists that batch (a version sees exactly the trajectories of its batches, as after an import)."""

from __future__ import annotations

import numpy as np
from sqlalchemy import func, select

from skillorchestra_core.db import session
from skillorchestra_core.db.models import Query, Trajectory, utcnow
from skillorchestra_core.evidence.batches import new_batch
from skillorchestra_core.handbook.content import AgentSpec, HandbookContent, SkillSpec
from skillorchestra_core.handbook.store import commit_version, get_or_create_handbook

CHUNK = 50_000


def build_synthetic_evidence(url: str, name: str, n_trajectories: int, *, n_agents: int = 10, n_skills: int = 100,
                             seed: int = 0) -> int:
    """Store a handbook `name` with about `n_trajectories` trajectories; returns the number stored."""
    rng = np.random.default_rng(seed)
    n_queries = max(1, n_trajectories // n_agents)
    task = rng.integers(0, n_skills, n_queries)
    rate = rng.uniform(0.2, 0.95, (n_agents, n_skills))
    split = np.array(["train", "val", "test"])[np.searchsorted([0.7, 0.8], rng.random(n_queries), side="right")]
    with session(url) as s:
        hb = get_or_create_handbook(s, name, synthetic=True)
        conn = s.connection()
        for lo in range(0, n_queries, CHUNK):
            conn.execute(Query.__table__.insert(), [
                {"handbook_id": hb.id, "ext_id": f"q{i}", "text": f"synthetic question {i} on topic {task[i]}",
                 "task": f"task-{task[i]}", "split": str(split[i]), "dataset": "synthetic"}
                for i in range(lo, min(lo + CHUNK, n_queries))])
        qids = np.array(conn.execute(select(Query.id).where(Query.handbook_id == hb.id).order_by(Query.id))
                        .scalars().all())
        now = utcnow()
        agents = [f"agent-{a:02d}" for a in range(n_agents)]
        prices = rng.uniform(0.05, 5.0, n_agents)
        wins = rng.random((n_queries, n_agents)) < rate[:, task].T
        batch = new_batch(s, hb.id, "synthetic", [  # DIGEST_FIELDS order
            (f"q{q}", agents[a], "answer", "import", float(wins[q, a]), 100 + q % 50, 50 + a, None, None)
            for q in range(n_queries) for a in range(n_agents)])
        for lo in range(0, n_queries, CHUNK // n_agents):
            hi = min(lo + CHUNK // n_agents, n_queries)
            conn.execute(Trajectory.__table__.insert(), [
                {"handbook_id": hb.id, "query_id": int(qids[q]), "agent": agents[a], "mode": "answer",
                 "score": float(wins[q, a]), "prompt_tokens": 100 + q % 50, "completion_tokens": 50 + a,
                 "cost_usd": None, "latency_s": None, "response": None, "source": "import", "path": None,
                 "created_at": now, "batch_id": batch}
                for q in range(lo, hi) for a in range(n_agents)])
        content = HandbookContent()
        content.add_mode("answer")
        for a, agent in enumerate(agents):
            content.agents[(agent, "answer")] = AgentSpec(agent, "answer", agent, float(prices[a]),
                                                          float(prices[a]) * 4, "card")
        for k in range(n_skills):
            key = f"answer.task_{k}"
            content.skills[key] = SkillSpec(key, "answer", f"task-{k}", f"Queries about topic {k}.",
                                            [f"topic{k}"], [f"synthetic question on topic {k}"])
        content.attributions = {(int(q), "answer", f"answer.task_{t}"): (1.0, "label") for q, t in zip(qids, task)}
        content.evidence_batches = [batch]
        content.evidence_watermark = s.execute(select(func.max(Trajectory.id))).scalar_one()
        commit_version(s, hb, content, author="bench", message="synthetic evidence")
        s.commit()
    return n_queries * n_agents
