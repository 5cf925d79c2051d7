"""Build `demo-qa`: one mode, six models, 7 categories with 15 sub-skills, every model's outcome on every query."""

from __future__ import annotations

import hashlib
import string
from typing import Callable

import numpy as np
from sqlmodel import Session

from skillorchestra_core.demo import qa_catalog as cat
from skillorchestra_core.evidence.ingest import AgentHint, IngestResult, OutcomeRow, ingest_outcomes
from skillorchestra_core.handbook.content import HandbookContent, SkillSpec

NAME = "demo-qa"
MODE = "answer"
QUERIES_PER_SKILL = 90  # ~900 queries in all: 50% train, 25% val, 25% test


def _fill(template: str, rng: np.random.Generator) -> str:
    fields = sorted({f for _, f, _, _ in string.Formatter().parse(template) if f})  # sorted: stable rng use
    values = {}
    for f in fields:
        if f in cat.FILLERS:
            values[f] = rng.choice(cat.FILLERS[f])
        elif f in ("h1", "h2"):
            values[f] = int(rng.integers(6, 22))
        elif f == "p":
            values[f] = int(rng.choice([5, 8, 10, 12, 15, 20, 25]))
        else:
            values[f] = int(rng.integers(3, 400))
    return template.format(**values)


def _true_rate(leaf: cat.LeafSkill, agent: str, group: str | None) -> float:
    if group is not None:
        return dict(cat.WORD_PROBLEM_GROUPS[group])[agent]
    if leaf.absolute:
        return dict(leaf.bonus)[agent]
    return float(np.clip(cat.ABILITY[agent] + leaf.difficulty + dict(leaf.bonus).get(agent, 0.0), 0.03, 0.97))


def _split(i: int, n: int) -> str:
    frac = i / n
    return "train" if frac < 0.5 else ("val" if frac < 0.75 else "test")


def _questions(leaf: cat.LeafSkill, rng: np.random.Generator) -> list[tuple[str, int]]:
    """Distinct (question, template index) pairs; small template spaces simply give fewer questions."""
    out: dict[str, int] = {}
    misses = 0
    while len(out) < QUERIES_PER_SKILL and misses < 200:
        t = int(rng.integers(len(leaf.templates)))
        text = _fill(leaf.templates[t], rng)
        if text in out:
            misses += 1
        out.setdefault(text, t)
    return list(out.items())


def _outcomes(rate: float, n: int, rng: np.random.Generator) -> np.ndarray:
    """n outcomes with exactly round(rate * n) successes in random order: the planted rates show without noise."""
    k = int(round(rate * n))
    return rng.permutation(np.r_[np.ones(k), np.zeros(n - k)])


def generate_rows(rng: np.random.Generator) -> tuple[list[OutcomeRow], dict[str, str], dict[str, str]]:
    """Outcome rows, plus query id -> leaf skill and query id -> word-problem group (for the planted split)."""
    rows: list[OutcomeRow] = []
    skill_of: dict[str, str] = {}
    group_of: dict[str, str] = {}
    for leaf in cat.LEAVES:
        questions = _questions(leaf, rng)
        qids = ["qa-" + hashlib.sha1(f"{leaf.key}:{text}".encode()).hexdigest()[:10] for text, _ in questions]
        groups: list[str | None] = [None] * len(questions)
        if leaf.key == "answer.math.word_problems":
            named = ["percentages" if t in cat.WORD_PROBLEM_PERCENT_TEMPLATES else "geometry" for _, t in questions]
            group_of.update(zip(qids, named))
            groups = [*named]
        skill_of.update((qid, leaf.key) for qid in qids)
        scores = {}
        for agent in cat.AGENTS:
            scores[agent] = np.zeros(len(questions))
            for group in dict.fromkeys(groups):  # first-seen order: the draws must not depend on hash seeds
                idx = [i for i, g in enumerate(groups) if g == group]
                scores[agent][idx] = _outcomes(_true_rate(leaf, agent, group), len(idx), rng)
        for i, ((text, _t), qid) in enumerate(zip(questions, qids)):
            split = _split(i, len(questions))
            prompt_tokens = len(text) // 4 + 40
            for agent, (_model, pin, pout) in cat.AGENTS.items():
                completion = int(max(20, rng.normal(cat.VERBOSITY[agent], 30)))
                rows.append(OutcomeRow(
                    line=len(rows) + 1, query_id=qid, query=text, agent=agent, score=float(scores[agent][i]),
                    mode=MODE, split=split, prompt_tokens=prompt_tokens, completion_tokens=completion,
                    cost_usd=(prompt_tokens * pin + completion * pout) / 1e6,
                    latency_s=round(float(completion) / 60.0, 3), dataset="demo-qa (synthetic)",
                ))
    return rows, skill_of, group_of


def _prepare(skill_of: dict[str, str], texts: dict[str, str], train: set[str]):
    def prepare(content: HandbookContent, query_ids: dict[str, int]) -> None:
        mode = content.modes[MODE]
        mode.description = "Answer the question directly with one model call."
        mode.insights = [{"insight_id": "demo0001", "content": "Small models do well on percentage word problems; "
                          "large ones on geometry.", "insight_type": "usage", "evidence_query_ids": [],
                          "confidence": 0.6}]
        for key, (name, description) in cat.CATEGORIES.items():
            content.skills[key] = SkillSpec(key=key, mode=MODE, name=name, description=description,
                                            provenance={"source": "demo"})
        examples: dict[str, list[str]] = {}
        for leaf in cat.LEAVES:
            content.skills[leaf.key] = SkillSpec(
                key=leaf.key, mode=MODE, name=leaf.name, description=leaf.description,
                indicators=list(leaf.indicators), parent_key=leaf.key.rsplit(".", 1)[0],
                provenance={"source": "demo"})
            examples[leaf.key] = []
        for ext_id, key in skill_of.items():
            content.attributions[(query_ids[ext_id], MODE, key)] = (1.0, "label")
            if ext_id in train and len(examples[key]) < 3:  # examples are learned: train questions only
                examples[key].append(ext_id)
        for key, ids in examples.items():
            content.skills[key].examples = [texts[i] for i in ids]
        content.metadata["planted"] = {
            "split": "answer.math.word_problems (percentages vs geometry: opposite agent rankings)",
            "merge": "answer.entities.capitals and answer.entities.currencies (same true rates)",
            "cheap_as_good": "qwen2.5-7b-instruct matches llama3.1-70b-instruct on answer.language.*",
        }
    return prepare


def build(s: Session, seed: int, *, name: str = NAME,
          edit_rows: Callable[[list[OutcomeRow]], list[OutcomeRow]] | None = None) -> IngestResult:
    """Build demo-qa; `edit_rows` may alter the generated rows first (what-if copies, e.g. in held-out tests)."""
    rng = np.random.default_rng(seed)
    rows, skill_of, _groups = generate_rows(rng)
    if edit_rows is not None:
        rows = edit_rows(rows)
    hints = {a: AgentHint(model=m, input_price_per_m=pin, output_price_per_m=pout, price_source="card")
             for a, (m, pin, pout) in cat.AGENTS.items()}
    train = {r.query_id for r in rows if r.split == "train"}
    prepare = _prepare(skill_of, {r.query_id: r.query for r in rows}, train)
    return ingest_outcomes(
        s, name, rows, source_label="skillorchestra demo (demo-qa)", author="demo", synthetic=True,
        message="Synthetic demo: six-model QA pool, 7 categories, 15 sub-skills", agent_hints=hints,
        description="Synthetic model-routing demo (one mode, the paper's six-model pool).", prepare=prepare,
    )
