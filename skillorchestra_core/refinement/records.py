"""Typed records of refinement: candidates with their evidence, and proposals. Stored as JSON, validated on read."""

from __future__ import annotations

from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from skillorchestra_core import posterior

Kind = Literal["split", "merge"]


class GroupEvidence(BaseModel):
    """One column of a candidate's evidence: a text group of a split, or one skill of a merge."""

    model_config = ConfigDict(frozen=True)
    label: str
    query_ids: list[int] = Field(default_factory=list)
    examples: list[str] = Field(default_factory=list)
    terms: list[str] = Field(default_factory=list)


class AgentEvidence(BaseModel):
    """One agent's weighted successes and failures per group (same order as the candidate's groups)."""

    model_config = ConfigDict(frozen=True)
    agent: str
    successes: list[float]
    failures: list[float]
    log_bf: float = 0.0

    def intervals(self, level: float = 0.95) -> list[tuple[float, float, float]]:
        """(posterior mean, low, high) per group under the flat Beta(1, 1) prior the test uses."""
        a = 1.0 + np.asarray(self.successes, float)
        b = 1.0 + np.asarray(self.failures, float)
        lo, hi = posterior.credible_interval(a, b, level)
        return [(float(m), float(x), float(y)) for m, x, y in zip(posterior.posterior_mean(a, b), lo, hi)]


class CandidateRecord(BaseModel):
    """What a detector found: the statistic, the groups or the pair, the per-agent evidence table."""

    model_config = ConfigDict(frozen=True)
    kind: Kind
    detector: str  # "bayes" or "reference"
    mode: str
    skills: list[str]  # split: [parent]; merge: [first, second]
    statistic: float  # log Bayes factor (bayes) or the reference rule's statistic
    threshold: float
    groups: list[GroupEvidence]
    agents: list[AgentEvidence]
    note: str = ""

    @property
    def title(self) -> str:
        if self.kind == "split":
            return f"split {self.skills[0]}"
        return f"merge {self.skills[0]} + {self.skills[1]}"


class ProposedSkill(BaseModel):
    key: str = Field(min_length=1, max_length=200)
    name: str = Field(min_length=1, max_length=200)
    description: str = Field(default="", max_length=2000)
    indicators: list[str] = Field(default_factory=list, max_length=30)


class Proposal(BaseModel):
    """Revised skills for a candidate: the merged skill, or the children with every evidence query assigned."""

    source: str  # "llm:<model>" or "offline"
    rationale: str = ""
    skills: list[ProposedSkill]
    assignment: dict[int, str] = Field(default_factory=dict)  # split only: query id -> child key
