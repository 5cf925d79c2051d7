"""Executing the chosen agent of a step: `replay` (the recorded outcome when the query is in the evidence), `live`
(an LLM call to the agent's model through the LLM layer, cost from usage x the agent's price card) or `dry-run`
(nothing runs; the expected cost is the agent's mean cost per call)."""

from __future__ import annotations

from skillorchestra_core.llm import LlmClient, LlmError
from skillorchestra_core.routing.model import RoutingModel
from skillorchestra_core.routing.trace import Execution, StepTrace

NO_LIVE_BACKEND = ("live execution needs an LLM backend: set SKILLORCHESTRA_LLM_BACKEND=litellm and "
                   "SKILLORCHESTRA_LLM_API_BASE / provider keys for the agents' models")


def agent_messages(query: str, step: StepTrace, history: list[StepTrace]) -> list[dict]:
    context = "\n\n".join(f"[{s.mode} by {s.chosen}]\n{s.execution.output}" for s in history
                          if s.execution is not None and s.execution.output)
    system = f"You are the '{step.mode}' agent of a multi-step system. Do this step's part of the task."
    user = query if not context else f"{query}\n\nEarlier steps:\n{context}"
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


class Executor:
    def __init__(self, mode: str = "dry-run", *, llm: LlmClient | None = None, max_output_chars: int = 4000):
        self.mode, self.llm, self.max_output_chars = mode, llm, max_output_chars

    def run(self, model: RoutingModel, query: str, query_id: int | None, step: StepTrace,
            history: list[StepTrace]) -> Execution:
        table = model.table(step.mode)
        cost = float(table.cost[table.agent_index[_chosen(step)]])  # the chosen candidate's cost, read directly
        if self.mode == "dry-run":
            return Execution(mode="dry-run", status="skipped", estimated_cost_usd=cost,
                             detail="dry run: nothing executed; the estimate is the agent's mean cost per call")
        if self.mode == "replay":
            return self._replay(model, query_id, step, cost)
        return self._live(model, query, step, history, cost)

    def _replay(self, model: RoutingModel, query_id: int | None, step: StepTrace, estimate: float) -> Execution:
        if model.evidence is None or query_id is None:
            return Execution(mode="replay", status="no_record", estimated_cost_usd=estimate,
                             detail="the query is not in the evidence: there is no recorded outcome to replay")
        hit = model.evidence.outcome(query_id, step.mode, _chosen(step))
        if hit is None:
            return Execution(mode="replay", status="no_record", estimated_cost_usd=estimate,
                             detail=f"{step.chosen} has no recorded attempt on this query in mode {step.mode}")
        score, cost, trajectory = hit
        return Execution(mode="replay", status="ok", score=score, cost_usd=cost, estimated_cost_usd=estimate,
                         detail=f"recorded outcome (trajectory #{trajectory})")

    def _live(self, model: RoutingModel, query: str, step: StepTrace, history: list[StepTrace],
              estimate: float) -> Execution:
        if self.llm is None or not getattr(self.llm, "configured", True):
            return Execution(mode="live", status="error", estimated_cost_usd=estimate, detail=NO_LIVE_BACKEND)
        table = model.table(step.mode)
        i = table.agent_index[_chosen(step)]
        agent_model = table.models[i] or _chosen(step)
        try:
            reply = self.llm.complete(agent_messages(query, step, history), purpose="routing.execute",
                                      model=agent_model)
        except LlmError as exc:
            return Execution(mode="live", status="error", estimated_cost_usd=estimate, detail=str(exc)[:1000])
        cost, how = reply.cost_usd, "the provider's reported cost"
        card = table.prices[i] if i < len(table.prices) else (None, None)
        if card[0] is not None and reply.prompt_tokens is not None:
            cost = ((reply.prompt_tokens or 0) * card[0] + (reply.completion_tokens or 0) * (card[1] or 0.0)) / 1e6
            how = "usage x the agent's price card"
        return Execution(mode="live", status="ok", cost_usd=cost, estimated_cost_usd=estimate,
                         prompt_tokens=reply.prompt_tokens, completion_tokens=reply.completion_tokens,
                         latency_s=round(reply.latency_s, 4), output=reply.text[:self.max_output_chars],
                         detail=f"live call to {agent_model}; cost from {how}; not scored (no judge)")


def _chosen(step: StepTrace) -> str:
    """The agent a decided step chose (an executor only runs decided steps)."""
    if step.chosen is None:
        raise ValueError(f"step {step.index + 1} ({step.mode}) chose no agent")
    return step.chosen
