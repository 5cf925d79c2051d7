"""Build `demo-agents`: three modes (search, code, answer) with the paper's agent pools, multi-step questions.

As in the reference exploration, each trajectory forces one agent in one mode of a run; `path` records the mode
sequence the run took. Planted: the cheap Qwen coder (reasoner-3) is as good as gpt-5 (reasoner-1) on computation
skills; answer-3 is poor on long contexts.
"""

from __future__ import annotations

import hashlib

import numpy as np
from sqlmodel import Session

from skillorchestra_core.evidence.ingest import AgentHint, IngestResult, OutcomeRow, ingest_outcomes
from skillorchestra_core.handbook.content import HandbookContent, SkillSpec

NAME = "demo-agents"
QUERIES_PER_TYPE = 48

# agent -> (mode, model, input $/1M, output $/1M)
AGENTS = {
    "search-1": ("search", "openai/gpt-5", 1.25, 10.0),
    "search-2": ("search", "openai/gpt-5-mini", 0.25, 2.0),
    "search-3": ("search", "openai/Qwen/Qwen3-32B", 0.10, 0.80),
    "reasoner-1": ("code", "openai/gpt-5", 1.25, 10.0),
    "reasoner-2": ("code", "openai/gpt-5-mini", 0.25, 2.0),
    "reasoner-3": ("code", "openai/Qwen/Qwen2.5-Coder-32B-Instruct", 0.10, 0.80),
    "answer-1": ("answer", "openai/gpt-5", 1.25, 10.0),
    "answer-2": ("answer", "openai/gpt-5-mini", 0.25, 2.0),
    "answer-3": ("answer", "openai/meta-llama/Llama-3.3-70B-Instruct", 0.1125, 0.90),
    "answer-4": ("answer", "openai/Qwen/Qwen3-32B", 0.10, 0.80),
}
MODES = {
    "search": ("Retrieve documents from a local Wikipedia index.",
               [("transition", "Search again with a narrower query when the first results lack the entity.")]),
    "code": ("Write and execute Python for arithmetic, dates and tables.",
             [("usage", "Use code when the answer needs arithmetic over retrieved numbers or dates."),
              ("transition", "Switch to code when arithmetic over retrieved dates is needed.")]),
    "answer": ("Compose the final answer from the gathered context.",
               [("constraint", "Answer only after the needed facts are retrieved.")]),
}
SKILLS = {  # key -> (name, description, indicators)
    "search.retrieval": ("Retrieval", "Finding the documents that hold the needed facts.", []),
    "search.retrieval.entity_lookup": ("Entity lookup", "Find one named entity's page and fact.", ["who", "which"]),
    "search.retrieval.multi_hop": ("Multi-hop retrieval", "Chain facts across several pages.", ["between", "of the"]),
    "search.retrieval.recent_events": ("Recent events", "Find coverage of recent events.", ["2024", "recent"]),
    "code.compute": ("Computation", "Programs that compute numbers from retrieved facts.", []),
    "code.compute.date_arithmetic": ("Date arithmetic", "Years and days between events.", ["years", "between"]),
    "code.compute.table_aggregation": ("Table aggregation", "Sum or rank values across rows.", ["total", "largest"]),
    "code.compute.constraint_check": ("Constraint checking", "Test candidates against rules.", ["satisfies"]),
    "answer.synthesis": ("Synthesis", "Turning gathered context into the final answer.", []),
    "answer.synthesis.numeric": ("Numeric answer", "Report a computed number with units.", ["how many"]),
    "answer.synthesis.comparison": ("Comparison", "Decide between candidates.", ["older", "larger"]),
    "answer.synthesis.long_context": ("Long-context summary", "Summarise many documents.", ["summarise"]),
}
# Query types: template, mode path, per-mode skill weights.
QUERY_TYPES = [
    ("Which {a} is older, the one in {p} or the one in {q}?", "search,answer",
     {"search": {"search.retrieval.entity_lookup": 1.0}, "answer": {"answer.synthesis.comparison": 1.0}}),
    ("How many years passed between the founding of the {a} of {p} and the death of its first {b}?",
     "search,code,answer",
     {"search": {"search.retrieval.multi_hop": 1.0}, "code": {"code.compute.date_arithmetic": 1.0},
      "answer": {"answer.synthesis.numeric": 1.0}}),
    ("What is the total population of the three largest {a} towns of {p}?", "search,code,answer",
     {"search": {"search.retrieval.multi_hop": 0.6, "search.retrieval.entity_lookup": 0.4},
      "code": {"code.compute.table_aggregation": 1.0}, "answer": {"answer.synthesis.numeric": 1.0}}),
    ("Summarise the 2024 news about the {a} of {p}.", "search,answer",
     {"search": {"search.retrieval.recent_events": 1.0}, "answer": {"answer.synthesis.long_context": 1.0}}),
    ("Which {a} of {p} satisfies all of these: founded before {y}, on a river, and larger than {q}'s?",
     "search,code,answer",
     {"search": {"search.retrieval.entity_lookup": 1.0}, "code": {"code.compute.constraint_check": 1.0},
      "answer": {"answer.synthesis.comparison": 1.0}}),
]
ABILITY = {"search-1": 0.86, "search-2": 0.76, "search-3": 0.62, "reasoner-1": 0.88, "reasoner-2": 0.78,
           "reasoner-3": 0.64, "answer-1": 0.87, "answer-2": 0.78, "answer-3": 0.66, "answer-4": 0.64}
OVERRIDES = {("reasoner-3", "code.compute.date_arithmetic"): 0.87,
             ("reasoner-3", "code.compute.table_aggregation"): 0.86,
             ("answer-3", "answer.synthesis.long_context"): 0.28,
             ("answer-4", "answer.synthesis.numeric"): 0.80,
             ("search-3", "search.retrieval.recent_events"): 0.35}
TOKENS = {"search": (2200, 250), "code": (1500, 400), "answer": (2600, 150)}
FILL = {"a": ["university", "cathedral", "bridge", "museum", "harbour", "railway"],
        "b": ["director", "bishop", "engineer", "curator"],
        "p": ["Lyon", "Porto", "Krakow", "Gdansk", "Bologna", "Utrecht", "Graz", "Turku"],
        "q": ["Ghent", "Brno", "Leeds", "Malmo", "Bergen", "Aarhus"]}


def _rate(agent: str, weights: dict[str, float]) -> float:
    return sum(w * OVERRIDES.get((agent, k), ABILITY[agent]) for k, w in weights.items())


def generate_rows(rng: np.random.Generator):
    rows, attributions, line = [], {}, 0
    for template, path, per_mode in QUERY_TYPES:
        seen = misses = 0
        while seen < QUERIES_PER_TYPE and misses < 200:
            values = {k: rng.choice(v) for k, v in FILL.items()} | {"y": int(rng.integers(1200, 1900))}
            text = template.format(**values)
            qid = "ag-" + hashlib.sha1(text.encode()).hexdigest()[:10]
            if (qid, path.split(",")[0]) in attributions:
                misses += 1
                continue
            split = "train" if seen < 0.6 * QUERIES_PER_TYPE else ("val" if seen < 0.8 * QUERIES_PER_TYPE else "test")
            for mode, weights in per_mode.items():
                attributions[(qid, mode)] = weights
                pt, ct = TOKENS[mode]
                for agent, (agent_mode, _m, pin, pout) in AGENTS.items():
                    if agent_mode != mode:
                        continue
                    line += 1
                    p_tok, c_tok = int(pt * rng.uniform(0.7, 1.3)), int(ct * rng.uniform(0.6, 1.4))
                    rows.append(OutcomeRow(
                        line=line, query_id=qid, query=text, agent=agent, mode=mode,
                        score=float(rng.random() < _rate(agent, weights)), split=split, prompt_tokens=p_tok,
                        completion_tokens=c_tok, cost_usd=(p_tok * pin + c_tok * pout) / 1e6,
                        latency_s=round(c_tok / 50.0, 2), path=path, dataset="demo-agents (synthetic)"))
            seen += 1
    return rows, attributions


def _prepare(attributions):
    def prepare(content: HandbookContent, query_ids: dict[str, int]) -> None:
        for mode, (description, insights) in MODES.items():
            content.add_mode(mode).description = description
            content.modes[mode].insights = [
                {"insight_id": f"demo{mode[:2]}{i}", "content": text, "insight_type": kind,
                 "evidence_query_ids": [], "confidence": 0.7} for i, (kind, text) in enumerate(insights)]
        for key, (name, description, indicators) in SKILLS.items():
            parent = key.rsplit(".", 1)[0] if key.count(".") == 2 else None
            content.skills[key] = SkillSpec(key=key, mode=key.split(".")[0], name=name, description=description,
                                            indicators=indicators, parent_key=parent, provenance={"source": "demo"})
        for (qid, mode), weights in attributions.items():
            for key, w in weights.items():
                content.attributions[(query_ids[qid], mode, key)] = (w, "label")
        content.metadata["planted"] = {
            "cheap_as_good": "reasoner-3 (Qwen coder) matches reasoner-1 (gpt-5) on code.compute.date_arithmetic "
                             "and table_aggregation",
            "weakness": "answer-3 is poor on answer.synthesis.long_context",
        }
    return prepare


def build(s: Session, seed: int) -> IngestResult:
    rng = np.random.default_rng(seed + 1)
    rows, attributions = generate_rows(rng)
    hints = {a: AgentHint(model=m, input_price_per_m=pin, output_price_per_m=pout, price_source="card")
             for a, (_mode, m, pin, pout) in AGENTS.items()}
    return ingest_outcomes(
        s, NAME, rows, source_label="skillorchestra demo (demo-agents)", author="demo", synthetic=True,
        message="Synthetic demo: search/code/answer agent pools, multi-step questions", agent_hints=hints,
        description="Synthetic agent-orchestration demo (modes search, code, answer).", prepare=_prepare(attributions),
    )
