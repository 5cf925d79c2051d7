"""Mode policy for multi-mode handbooks: which mode each step runs in, and why.

Offline: the most common successful mode sequence among the evidence runs of the most similar train queries (TF-IDF
neighbours, similarity-weighted), else over all the evidence. With an LLM: an orchestrator prompt with the modes, their
descriptions and insights, and the steps so far picks the next mode (validated, re-asked once), falling back to the
offline path with the reason recorded. A run ends after the terminal mode or at `max_steps`.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np
from pydantic import BaseModel

from skillorchestra_core.llm import LlmClient, ask_structured
from skillorchestra_core.routing.model import RoutingModel
from skillorchestra_core.routing.retriever import TfidfIndex
from skillorchestra_core.routing.trace import StepTrace

NEIGHBOURS = 10


@dataclass(frozen=True)
class ModeDecision:
    mode: str
    reason: str
    source: str


class ModeChoice(BaseModel):
    mode: str
    reason: str = ""


def _path_index(model: RoutingModel):
    def build():
        texts = sorted(set(model.paths.texts)) if model.paths else []
        return TfidfIndex(texts), {t: i for i, t in enumerate(texts)}
    return model.cached(("paths",), build)


def offline_plan(model: RoutingModel, query: str, max_steps: int) -> tuple[list[str], str, str]:
    """(path, reason, source) for a query."""
    modes = model.mode_names
    if len(modes) == 1:
        return modes, "single-mode handbook", "single-mode"
    terminal = model.terminal_mode()
    p = model.paths
    ok = [m for m in modes]
    path, reason, source = [], "", "offline:evidence-paths"
    if p is not None and p.success.sum() > 0:
        index, position = _path_index(model)
        sims = index.similarities(query)
        doc_of_run = np.array([position[t] for t in p.texts])
        weight = sims[doc_of_run] * p.success
        near = np.argsort(-sims, kind="stable")[:NEIGHBOURS]
        nearby = set(near[sims[near] > 0].tolist())
        votes: dict[str, float] = {}
        for run in np.flatnonzero(weight > 0):
            if doc_of_run[run] in nearby:
                votes[p.paths[run]] = votes.get(p.paths[run], 0.0) + float(weight[run])
        if votes:
            best = sorted(votes.items(), key=lambda kv: (-kv[1], kv[0]))[0][0]
            path = best.split(",")
            reason = (f"most common successful mode sequence among the {len(nearby)} most similar evidence queries "
                      f"({votes[best] / sum(votes.values()):.0%} of their similarity-weighted successful runs)")
        else:
            counts = Counter(pp for pp, s in zip(p.paths, p.success) if s > 0)
            best, n = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[0]
            path = best.split(",")
            reason = (f"no similar evidence query: the most common successful mode sequence overall "
                      f"({n} of {int(p.success.sum())} successful runs)")
    path = [m for m in path if m in model.modes]
    if not path:
        path = [m for m in ok if m != terminal] + ([terminal] if terminal in model.modes else [])
        reason, source = "no mode sequences in the evidence: every mode once, the terminal mode last", "fallback"
    if len(path) > max_steps:
        path = path[:max_steps - 1] + [path[-1]]
        reason += f"; cut to {max_steps} steps"
    return path, reason, source


class ModePolicy:
    """Stepwise: `next(query, steps)` returns the next ModeDecision or None when the run is over."""

    def __init__(self, model: RoutingModel, *, llm: LlmClient | None = None, max_steps: int = 4,
                 use_llm: bool = True):
        self.model, self.llm, self.max_steps = model, llm, max(1, max_steps)
        self.use_llm = use_llm and llm is not None and getattr(llm, "configured", True) and len(model.modes) > 1
        self._plan: tuple[list[str], str, str] | None = None

    def plan(self, query: str) -> tuple[list[str], str, str]:
        if self._plan is None:
            self._plan = offline_plan(self.model, query, self.max_steps)
        return self._plan

    def next(self, query: str, steps: list[StepTrace]) -> ModeDecision | None:
        i = len(steps)
        if i >= self.max_steps or (steps and steps[-1].mode == self.model.terminal_mode() and self.use_llm):
            return None
        if self.use_llm:
            return self._ask(query, steps)
        path, reason, source = self.plan(query)
        if i >= len(path):
            return None
        return ModeDecision(path[i], f"step {i + 1} of {' -> '.join(path)}: {reason}", source)

    def _ask(self, query: str, steps: list[StepTrace]) -> ModeDecision:
        modes = self.model.mode_names
        terminal = self.model.terminal_mode()
        lines = []
        for m in modes:
            t = self.model.modes[m]
            tips = "; ".join(str(x.get("content", "")) for x in t.insights if isinstance(x, dict))
            lines.append(f"- {m}: {t.description}" + (f" Insights: {tips}" if tips else ""))
        done = "\n".join(f"{s.index + 1}. {s.mode} by {s.chosen}" + (
            f": {s.execution.output[:300]}" if s.execution and s.execution.output else "") for s in steps) or "(none)"
        last = len(steps) + 1 >= self.max_steps
        messages = [
            {"role": "system", "content": (
                "You orchestrate a multi-step agent system. Pick the mode of the next step. "
                f"The run ends after the '{terminal}' mode." + (f" This is the last step: pick '{terminal}'."
                                                                if last else "")
                + " Reply with JSON only: {\"mode\": \"<one of the modes>\", \"reason\": \"...\"}.")},
            {"role": "user",
             "content": "Modes:\n" + "\n".join(lines) + f"\n\nSteps so far:\n{done}\n\nQuery:\n{query}"},
        ]

        def check(c: ModeChoice) -> None:
            if c.mode not in modes:
                raise ValueError(f"mode {c.mode!r} is not one of {', '.join(modes)}")

        if self.llm is None:  # `use_llm` is only set with a client
            raise ValueError("the orchestrator has no LLM client to ask")
        got = ask_structured(self.llm, messages, ModeChoice, purpose="routing.mode", check=check)
        if got.value is not None:
            mode = terminal if last and terminal in self.model.modes else got.value.mode
            return ModeDecision(mode, got.value.reason[:500] or "chosen by the orchestrator", f"llm:{got.model}")
        path, reason, _ = self.plan(query)
        i = len(steps)
        mode = path[i] if i < len(path) else terminal
        return ModeDecision(mode, f"LLM mode choice failed ({got.error}); offline path: {reason}", "fallback")
