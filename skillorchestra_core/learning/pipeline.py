"""Learn a handbook from its traces: discovery, attribution, profiling, then one new version.

The database is read once (`read_inputs`), the work is done in memory, and the new version is committed in one
transaction at the end with the starting version as its parent (a compare-and-set: Conflict if someone committed
meanwhile). A cancelled or killed run therefore writes nothing.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import pandas as pd

from skillorchestra_core.errors import StudioError
from skillorchestra_core.handbook.content import HandbookContent
from skillorchestra_core.learning import attribution as attr
from skillorchestra_core.learning import insights as ins
from skillorchestra_core.learning import profile
from skillorchestra_core.learning.discovery import discover_offline, place_skills
from skillorchestra_core.learning.inputs import LearnInputs
from skillorchestra_core.learning.llm_discovery import discover_llm
from skillorchestra_core.llm import LlmClient

STAGES = ("discovery", "attribution", "profiling")
Progress = Callable[[str, float, str], None]  # (stage, fraction done 0..1, detail)


class Cancelled(StudioError):
    """The run was cancelled; nothing was written."""


@dataclass(frozen=True)
class LearnOptions:
    llm: str | None = None  # a litellm model string; None learns offline
    max_queries: int | None = None  # train queries per mode given to discovery and LLM attribution
    seed: int = 0
    task_labels: bool = True  # offline: make skills from the queries' task labels where they have one
    author: str = "learner"
    message: str = ""

    @property
    def method(self) -> str:
        return f"llm:{self.llm}" if self.llm else "offline"


@dataclass
class LearnReport:
    handbook: str
    parent: int
    method: str
    version: int | None = None
    created: bool = False
    skills_added: dict[str, list[dict]] = field(default_factory=dict)
    attributed: dict[str, int] = field(default_factory=dict)  # source -> train (query, mode) pairs
    heldout_attributed: int = 0
    insights: dict[str, list[str]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    stats: dict[str, dict] = field(default_factory=dict)
    diff: list[dict] = field(default_factory=list)  # posterior changes vs the parent, largest first

    def to_dict(self) -> dict:
        """Plain JSON values: NaN (a skill new in this version has no parent posterior) becomes null."""
        return _plain(dict(vars(self)))


def _plain(value):
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not np.isfinite(value):
        return None
    return value


def _sample(ids: list[int], limit: int | None, seed: int) -> list[int]:
    if not limit or len(ids) <= limit:
        return ids
    pick = np.random.default_rng(seed).permutation(len(ids))[:limit]
    return sorted(ids[i] for i in pick)


def learn_content(inputs: LearnInputs, options: LearnOptions, client: LlmClient | None = None,
                  progress: Progress | None = None, cancelled: Callable[[], bool] | None = None
                  ) -> tuple[HandbookContent, LearnReport]:
    """The new version's content and the report. Pure: reads `inputs` only."""
    tell = progress or (lambda *_: None)
    stop = cancelled or (lambda: False)
    if options.llm and client is None:
        raise StudioError("an LLM model was named but no client was given")
    content = copy.deepcopy(inputs.loaded.content)
    report = LearnReport(inputs.loaded.handbook_name, inputs.loaded.number, options.method)
    modes = [m for m in inputs.modes if not inputs.outcomes(m).empty]
    found = {}
    for i, mode in enumerate(modes):
        _check(stop)
        tell("discovery", i / max(len(modes), 1), f"mode {mode}")
        found[mode] = _discover(content, inputs, mode, options, client, tell, i, len(modes))
        report.skills_added[mode] = [
            {"key": s.key, "name": s.name, "parent": s.parent_key, "provenance": s.provenance}
            for s in place_skills(content, found[mode])]
        report.notes += found[mode].notes
        report.stats[mode] = found[mode].stats | {"method": found[mode].method}
    tell("discovery", 1.0, "done")
    for i, mode in enumerate(modes):
        _check(stop)
        tell("attribution", i / max(len(modes), 1), f"mode {mode}")
        report.heldout_attributed += _attribute(content, inputs, mode, found[mode], options, client, report)
    tell("attribution", 1.0, "done")
    _check(stop)
    tell("profiling", 0.0, "competence and costs")
    _profile(content, inputs, options, client, report)
    tell("profiling", 1.0, "done")
    _check(stop)
    return content, report


def _check(stop: Callable[[], bool]) -> None:
    if stop():
        raise Cancelled("learning run cancelled; nothing was written")


def _discover(content, inputs, mode, options, client, tell, i, n):
    if options.llm:
        def tick(done, total):
            tell("discovery", (i + done / total) / n, f"mode {mode}: batch {done}/{total}")
        return discover_llm(client, content, inputs, mode, limit=options.max_queries, tick=tick)
    if options.max_queries:
        keep = set(_sample(sorted(inputs.texts), options.max_queries, options.seed))
        sub = LearnInputs(inputs.loaded, inputs.frames, {q: t for q, t in inputs.texts.items() if q in keep},
                          inputs.ext_ids, inputs.heldout_texts, inputs.responses)
        inputs = _restricted(sub, keep)
    return discover_offline(content, inputs, mode, options.seed, task_labels=options.task_labels)


def _restricted(inputs: LearnInputs, keep: set[int]) -> LearnInputs:
    f = inputs.frames
    outcomes = f.outcomes[f.outcomes["query_id"].isin(keep)].reset_index(drop=True)
    frames = profile.VersionFrames(outcomes, f.attributions, f.skills, f.agents, f.imported, f.evidence,
                                   f.learn_splits)
    return LearnInputs(inputs.loaded, frames, inputs.texts, inputs.ext_ids, inputs.heldout_texts, inputs.responses)


def _attribute(content, inputs, mode, found, options, client, report) -> int:
    attr.apply_placement(content, found)
    if options.llm:
        todo = attr.unattributed(content, inputs, mode)
        report.notes += attr.attribute_llm(client, content, inputs, mode, _sample(todo, options.max_queries,
                                                                                  options.seed))
    _n_train, n_held = attr.attribute_rest(content, inputs, mode)
    train = set(inputs.texts)
    pairs = {(q, by) for (q, m, _k), (_w, by) in content.attributions.items() if m == mode and q in train}
    for _q, by in pairs:
        report.attributed[by] = report.attributed.get(by, 0) + 1
    return n_held


def _profile(content, inputs, options, client, report) -> None:
    before = profile.competence(inputs.frames)
    frames = profile.frames_from_content(content, inputs.frames.evidence)
    comp, costs = profile.competence(frames), profile.costs(frames)
    for mode in content.modes:
        leaves = attr.leaves(content, mode)
        if options.llm:
            new, why = ins.llm_insights(client, mode, comp, costs, leaves)
            report.notes += [why] if why else []
        else:
            new = ins.templated(mode, comp, costs, leaves)
        content.modes[mode].insights = ins.merge_insights(content.modes[mode].insights, new)
        report.insights[mode] = [i["content"] for i in new]
    report.diff = posterior_diff(before, comp).head(200).to_dict("records")


def posterior_diff(before: pd.DataFrame, after: pd.DataFrame) -> pd.DataFrame:
    """Per (agent, mode, skill): the posterior mean and evidence before and after, largest change first; a skill new
    in `after` has no 'before' (NaN)."""
    cols = ["agent", "mode", "skill", "mean", "n"]
    d = after[cols].merge(before[cols], on=["agent", "mode", "skill"], how="left", suffixes=("_new", "_parent"))
    d["delta"] = d["mean_new"] - d["mean_parent"]
    d["new_skill"] = d["mean_parent"].isna()
    order = d["delta"].abs().fillna(d["mean_new"].abs()).sort_values(ascending=False, kind="stable").index
    return d.loc[order].reset_index(drop=True)
