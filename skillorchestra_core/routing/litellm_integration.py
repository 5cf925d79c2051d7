"""Let a LiteLLM Router pick the deployment with a handbook: a custom routing strategy.

    from litellm import Router
    from skillorchestra_core.routing.api import HandbookRouter
from skillorchestra_core.routing.inputs import check_lambda, check_query
    from skillorchestra_core.routing.litellm_integration import HandbookRoutingStrategy

    handbook = HandbookRouter.from_database("demo-qa", lam=0.1)
    router = Router(model_list=[
        {"model_name": "pool", "litellm_params": {"model": "openai/gpt-4o"},
         "model_info": {"handbook_agent": "gpt-4o"}},
        {"model_name": "pool", "litellm_params": {"model": "openai/gpt-4o-mini"}},   # matched by model string
    ])
    strategy = HandbookRoutingStrategy(handbook).install(router)
    router.completion(model="pool", messages=[{"role": "user", "content": "Who wrote the Iliad?"}])
    strategy.last_trace.chosen_agent

A deployment serves the handbook agent named in its `model_info.handbook_agent`, else the agent whose model string
equals its `litellm_params.model`, else the agent named like its `model_name`. The handbook ranks its candidates and
the best-ranked agent that has a deployment in the requested group wins. This module does not import litellm: the
strategy is duck-typed to litellm's CustomRoutingStrategyBase (`get_available_deployment` and its async twin).
"""

from __future__ import annotations

import threading
import warnings
from typing import Any

from skillorchestra_core.routing.api import HandbookRouter
from skillorchestra_core.routing.inputs import check_lambda, check_query
from skillorchestra_core.routing.trace import RouteTrace


def query_text(messages: list[dict] | None, input: Any = None) -> str:
    """The last user message's text (string content or the text parts of a content list)."""
    for m in reversed(messages or []):
        if m.get("role") == "user":
            content = m.get("content")
            if isinstance(content, str):
                return content
            if isinstance(content, list):
                return " ".join(p.get("text", "") for p in content if isinstance(p, dict))
    return input if isinstance(input, str) else ""


class HandbookRoutingStrategy:
    def __init__(self, handbook: HandbookRouter, *, lam: float | None = None, mode: str | None = None):
        self.handbook, self.lam, self.mode = handbook, None if lam is None else check_lambda(lam), mode
        self.router = None
        self._local = threading.local()

    @classmethod
    def from_database(cls, handbook: str, *, db_url: str | None = None, mode: str | None = None,
                      **router_kwargs) -> "HandbookRoutingStrategy":
        """The strategy over the handbook's published configuration (else its latest version)."""
        return cls(HandbookRouter.from_database(handbook, db_url=db_url, **router_kwargs), mode=mode)

    @property
    def last_trace(self) -> RouteTrace | None:
        return getattr(self._local, "trace", None)

    def install(self, router) -> "HandbookRoutingStrategy":
        """Register this strategy on a litellm Router (register_plugin, or the older set_custom_routing_strategy)."""
        self.router = router
        if hasattr(router, "register_plugin"):
            router.register_plugin(self)
        else:
            router.set_custom_routing_strategy(self)
        return self

    def _deployments(self, model: str) -> list[dict]:
        if self.router is None:
            raise RuntimeError("install() the strategy on a litellm Router first")
        if hasattr(self.router, "registry"):
            everything = list(self.router.registry().all())
        else:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DeprecationWarning)
                everything = list(self.router.model_list)
        group = [d for d in everything if d.get("model_name") == model]
        return group or everything

    def _agent_of(self, deployment: dict, agents: dict[str, str]) -> str | None:
        info = deployment.get("model_info") or {}
        if info.get("handbook_agent") in agents:
            return info["handbook_agent"]
        model = (deployment.get("litellm_params") or {}).get("model")
        for agent, agent_model in agents.items():
            if model and model == agent_model:
                return agent
        name = deployment.get("model_name")
        return name if name in agents else None

    def pick(self, model: str, messages: list[dict] | None = None, input: Any = None,
             request_kwargs: dict | None = None) -> dict:
        text = check_query(query_text(messages, input))
        deployments = self._deployments(model)
        trace = self.handbook.route(text, lam=self.lam)
        self._local.trace = trace
        if trace is None or not trace.steps:
            return deployments[0]
        step = trace.steps[-1] if self.mode is None else next(
            (s for s in trace.steps if s.mode == self.mode), trace.steps[-1])
        table = self.handbook.model.table(step.mode)
        agents = dict(zip(table.agents, table.models))
        served: dict[str, dict] = {}
        for d in deployments:
            agent = self._agent_of(d, agents)
            if agent is not None:
                served.setdefault(agent, d)
        for cand in sorted(step.candidates, key=lambda c: c.rank):
            if cand.agent in served:
                if request_kwargs is not None:
                    meta = request_kwargs.setdefault("metadata", {})
                    if isinstance(meta, dict):
                        meta["skillorchestra"] = {"agent": cand.agent, "chosen": step.chosen, "mode": step.mode,
                                                  "cause": step.cause, "margin": step.margin,
                                                  "handbook": trace.handbook, "version": trace.version}
                return served[cand.agent]
        return deployments[0]

    def get_available_deployment(self, model: str, messages: list[dict] | None = None, input: Any = None,
                                 specific_deployment: bool | None = False, request_kwargs: dict | None = None):
        return self.pick(model, messages, input, request_kwargs)

    async def async_get_available_deployment(self, model: str, messages: list[dict] | None = None, input: Any = None,
                                             specific_deployment: bool | None = False,
                                             request_kwargs: dict | None = None):
        return self.pick(model, messages, input, request_kwargs)
