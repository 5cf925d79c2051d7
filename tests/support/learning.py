"""A small unlabelled handbook with two kinds of question and opposite agent rankings, for learning tests."""

from __future__ import annotations

import numpy as np

from skillorchestra_core.evidence.ingest import AgentHint, OutcomeRow, ingest_outcomes

NAME = "contrast"
HINTS = {"calc": AgentHint(model="openai/calc", input_price_per_m=1.0, output_price_per_m=2.0),
         "geo": AgentHint(model="openai/geo", input_price_per_m=1.0, output_price_per_m=2.0),
         "mid": AgentHint(model="openai/mid", input_price_per_m=0.1, output_price_per_m=0.2)}
_KINDS = {  # kind -> (templates, per-agent success rate)
    "arith": (["Compute the sum of the numbers {a} and {b} and the product with {c}",
               "What is the product of the numbers {a} and {c} minus the sum with {b}"],
              {"calc": 0.9, "geo": 0.2, "mid": 0.55}),
    "geo": (["Which river flows through the capital city of the country near mountain {a}",
             "Name the capital city of the country whose river rises on mountain {b}"],
            {"calc": 0.2, "geo": 0.9, "mid": 0.55}),
}


def contrast_rows(per_kind: int = 50, seed: int = 3) -> list[OutcomeRow]:
    rng = np.random.default_rng(seed)
    rows, line = [], 0
    for kind, (templates, rates) in _KINDS.items():
        for q in range(per_kind):
            a, b, c = (int(x) for x in rng.integers(2, 999, 3))
            text = templates[q % 2].format(a=a, b=b, c=c)
            split = "train" if q < int(per_kind * 0.7) else "test"
            for agent, rate in rates.items():
                line += 1
                rows.append(OutcomeRow(line=line, query_id=f"{kind}-{q}", query=text, agent=agent,
                                       score=float(rng.random() < rate), split=split, task=kind,
                                       prompt_tokens=50, completion_tokens=20,
                                       response=f"reply of {agent} to {kind}-{q}"))
    return rows


def build_contrast(s, name: str = NAME, **kw) -> None:
    ingest_outcomes(s, name, contrast_rows(**kw), source_label="contrast test", agent_hints=HINTS, synthetic=True)
