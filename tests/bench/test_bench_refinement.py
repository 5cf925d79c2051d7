"""Refinement detectors on generated data with known structure: false-positive rates and power, Bayes-factor
detectors against the reference rules, measured in the same run. Prints figures; asserts nothing about them.

- homogeneous skills (two text topics, ONE agent profile): a split here is a false positive;
- planted splits (two text topics with opposite agent rankings): a split here is a hit;
- pairs of sibling skills with independent profiles: a merge is a false positive; with one profile: a hit.
"""

from __future__ import annotations

import numpy as np
import pytest
from support.refinement_data import SkillPlan, build, homogeneous_plan

from skillorchestra_core.refinement.run import run_detectors

pytestmark = pytest.mark.bench

AGENTS = [f"agent{i}" for i in range(6)]
TRIALS = 100


def _rate(detector: str, make_plans, kind: str, trials: int = TRIALS, seed: int = 0) -> float:
    rng = np.random.default_rng(seed)
    hits = 0
    for _ in range(trials):
        ev = build(make_plans(rng), AGENTS, rng)
        hits += any(c.kind == kind for c in run_detectors(ev, detector, rng).candidates)
    return hits / trials


def _homogeneous(rng, queries=80):
    return [homogeneous_plan("m.cat.s", len(AGENTS), rng, queries)]


def _planted_split(rng, queries=80):
    a = rng.uniform(0.1, 0.9, len(AGENTS))
    return [SkillPlan("m.cat.s", [a, 1.0 - a], queries)]


def _independent_pair(rng, queries=80):
    return [SkillPlan("m.cat.x", [rng.uniform(0.1, 0.9, len(AGENTS))], queries),
            SkillPlan("m.cat.y", [rng.uniform(0.1, 0.9, len(AGENTS))], queries)]


def _same_pair(rng, queries=80):
    rates = rng.uniform(0.1, 0.9, len(AGENTS))
    return [SkillPlan("m.cat.x", [rates], queries), SkillPlan("m.cat.y", [rates], queries)]


def test_bench_detector_error_rates(bench_report):
    rows = [
        ("split false positives (homogeneous, 80 queries)", _homogeneous, "split"),
        ("split false positives (homogeneous, 400 queries)", lambda r: _homogeneous(r, 400), "split"),
        ("split power (planted, 80 queries)", _planted_split, "split"),
        ("merge false positives (independent profiles)", _independent_pair, "merge"),
        ("merge power (one profile, 80 queries)", _same_pair, "merge"),
        ("merge power (one profile, 400 queries)", lambda r: _same_pair(r, 400), "merge"),
    ]
    print(f"\n{len(AGENTS)} agents, {TRIALS} generated handbooks per row")
    print(f"{'':<50} {'bayes':>8} {'reference':>10}")
    for label, plans, kind in rows:
        ours, ref = _rate("bayes", plans, kind), _rate("reference", plans, kind)
        print(f"{label:<50} {ours:>8.3f} {ref:>10.3f}")
        bench_report(f"Refinement {label}, Bayes-factor detector", ours, "share", baseline=ref,
                     baseline_label="reference rule", higher_is_better="power" in label)


def test_bench_llmrouter_detection(llmrouter_dir, tmp_path, bench_report):
    """The real outcome set: how many of its 14 task skills split, which pairs merge (train split only)."""
    import time

    from skillorchestra_core.db import session
    from skillorchestra_core.formats.llmrouter import import_llmrouter
    from skillorchestra_core.handbook.store import load_version
    from skillorchestra_core.refinement.run import detect_version

    with session(f"sqlite:///{tmp_path / 'llmrouter.db'}") as s:
        import_llmrouter(s, llmrouter_dir, "llmrouter")
        s.commit()
        loaded = load_version(s, "llmrouter")
        for detector in ("bayes", "reference"):
            start = time.perf_counter()
            found = detect_version(s, loaded, detector)
            took = time.perf_counter() - start
            splits = [x for x in found.scored if x.kind == "split"]
            bench_report(f"Refinement detection on LLMRouter train ({detector})", took, "s")
            print(f"\nLLMRouter, {detector}: {sum(x.candidate for x in splits)} of {len(splits)} task skills split, "
                  f"{sum(c.kind == 'merge' for c in found.candidates)} merge candidate(s), {took:.1f} s")
            for c in found.candidates:
                print(f"  {c.kind} {' + '.join(c.skills)}: {c.statistic:.2f}")
