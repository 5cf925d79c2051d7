"""Small handbooks for routing tests, built through the real ingestion path (label attributions from tasks)."""

from __future__ import annotations

from skillorchestra_core.evidence.ingest import AgentHint, OutcomeRow, ingest_outcomes

MINI_QA = "mini-qa"
MINI_AGENTS = "mini-agents"

# task -> (question templates, per-agent success pattern over 10 queries)
_QA_TASKS = {
    "arithmetic": (["What is {i} plus {j} times seven?", "Compute the sum of {i} and {j} and then square it"],
                   {"big": 9, "mid": 8, "small": 8}),
    "history": (["Which emperor ruled Rome in the year {i}00?", "Who founded the dynasty that ruled China in {i}"],
                {"big": 9, "mid": 6, "small": 3}),
    "coding": (["Write a python function that reverses list number {i}", "Fix the python bug in loop {j}"],
               {"big": 8, "mid": 7, "small": 5}),
}
QA_HINTS = {
    "big": AgentHint(model="openai/big", input_price_per_m=5.0, output_price_per_m=15.0),
    "mid": AgentHint(model="openai/mid", input_price_per_m=1.0, output_price_per_m=3.0),
    "small": AgentHint(model="openai/small", input_price_per_m=0.1, output_price_per_m=0.3),
}
_COST = {"big": 0.010, "mid": 0.002, "small": 0.0002}


def qa_rows() -> list[OutcomeRow]:
    rows, line = [], 0
    for task, (templates, wins) in _QA_TASKS.items():
        for q in range(10):
            text = templates[q % 2].format(i=q + 3, j=q * 7 + 1)
            split = "train" if q < 8 else "val"
            for agent, n_win in wins.items():
                line += 1
                rows.append(OutcomeRow(line=line, query_id=f"{task}-{q}", query=text, agent=agent,
                                       score=1.0 if q < n_win else 0.0, task=task, split=split,
                                       cost_usd=_COST[agent], prompt_tokens=100, completion_tokens=50))
    return rows


def build_mini_qa(s) -> None:
    ingest_outcomes(s, MINI_QA, qa_rows(), source_label="test", skills_from_task=True, agent_hints=QA_HINTS,
                    synthetic=True)


_AGENT_TYPES = [  # template, path, per-mode task label
    ("Which river is longer, the one in {p} or the one in {q}?", "search,answer",
     {"search": "lookup", "answer": "compare"}),
    ("How many years passed between the founding of {p} and the death of {q}?", "search,code,answer",
     {"search": "multihop", "code": "dates", "answer": "numeric"}),
]
_AGENT_POOL = {"search": ["s-big", "s-small"], "code": ["c-big", "c-small"], "answer": ["a-big", "a-small"]}
_PLACES = ["Alba", "Bera", "Cora", "Dova", "Erin", "Faro", "Gala", "Hera"]


def agents_rows() -> list[OutcomeRow]:
    rows, line = [], 0
    for t, (template, path, tasks) in enumerate(_AGENT_TYPES):
        for q in range(8):
            text = template.format(p=_PLACES[q], q=_PLACES[(q + 3) % 8])
            for mode in path.split(","):
                for agent in _AGENT_POOL[mode]:
                    line += 1
                    big = agent.endswith("big")
                    win = q < (7 if big else (6 if mode == "code" else 4))
                    rows.append(OutcomeRow(line=line, query_id=f"t{t}-{q}", query=text, agent=agent, mode=mode,
                                           score=float(win), task=tasks[mode], split="train" if q < 6 else "test",
                                           cost_usd=0.01 if big else 0.001, path=path))
    return rows


def build_mini_agents(s) -> None:
    ingest_outcomes(s, MINI_AGENTS, agents_rows(), source_label="test", skills_from_task=True, synthetic=True)


def routing_models(db_url: str):
    """(mini-qa model, mini-agents model) built in a fresh database at `db_url`."""
    from skillorchestra_core.db import session

    with session(db_url) as s:
        build_mini_qa(s)
        build_mini_agents(s)
        s.commit()
    return routing_models_of(db_url)


def routing_models_of(db_url: str):
    """(mini-qa model, mini-agents model) of a database that already holds both handbooks."""
    from skillorchestra_core.db import session
    from skillorchestra_core.routing.build import routing_model

    with session(db_url) as s:
        return routing_model(s, MINI_QA), routing_model(s, MINI_AGENTS)
