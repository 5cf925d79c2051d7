"""The reference code's refinement rules as a named detector, for comparison with the Bayes-factor detectors.

Split: population variance of the empirical rates of agents with >= 3 observations (>= 2 such agents) at least 0.15.
Merge: two skills with the same parent whose empirical rates are exactly equal for every agent, where a skill with no
evidence scores 0.0 (so every pair of unseen skills is a candidate, as in the reference code). Counts are the rolled-up
train counts, like the reference profiles.
"""

from __future__ import annotations

import numpy as np

from skillorchestra_core.refinement import stats
from skillorchestra_core.refinement.detect import Detection, Scored, _count_grid, _examples
from skillorchestra_core.refinement.evidence import RefinementEvidence
from skillorchestra_core.refinement.records import AgentEvidence, CandidateRecord, GroupEvidence

SPLIT_VARIANCE = 0.15
MIN_OBSERVATIONS = 3.0


def _agents(agents: list[str], s: np.ndarray, f: np.ndarray) -> list[AgentEvidence]:
    return [AgentEvidence(agent=a, successes=[float(x) for x in s[:, k]], failures=[float(x) for x in f[:, k]])
            for k, a in enumerate(agents)]


def reference_splits(ev: RefinementEvidence) -> Detection:
    out = Detection()
    for mode, group in ev.skills.groupby("mode", sort=True):
        keys = sorted(group["skill"])
        agents, s, f = _count_grid(ev, str(mode), keys)
        for r, key in enumerate(keys):
            var, used = stats.agent_rate_variance(s[r], f[r], MIN_OBSERVATIONS)
            ok = used >= 2 and var >= SPLIT_VARIANCE
            out.scored.append(Scored("split", (key,), var, ok, "" if ok else "variance below 0.15"))
            if ok:
                out.candidates.append(CandidateRecord(
                    kind="split", detector="reference", mode=str(mode), skills=[key], statistic=round(var, 6),
                    threshold=SPLIT_VARIANCE, groups=[GroupEvidence(label=key)],
                    agents=_agents(agents, s[r:r + 1], f[r:r + 1]), note="variance of agents' empirical rates"))
    return out


def reference_merges(ev: RefinementEvidence) -> Detection:
    out = Detection()
    sk = ev.skills.assign(parent=ev.skills["parent"].where(ev.skills["parent"].notna(), ""))
    for (mode, _), group in sk.groupby(["mode", "parent"], sort=True):
        keys = sorted(group["skill"])
        agents, s, f = _count_grid(ev, str(mode), keys)
        n = s + f
        rate = np.divide(s, n, out=np.zeros_like(s), where=n > 0)  # the reference scores unseen as 0.0
        for i in range(len(keys)):
            for j in range(i + 1, len(keys)):
                diff = float(np.abs(rate[i] - rate[j]).max()) if agents else 0.0
                ok = diff <= 0.0
                out.scored.append(Scored("merge", (keys[i], keys[j]), diff, ok, "" if ok else "rates differ"))
                if ok:
                    out.candidates.append(CandidateRecord(
                        kind="merge", detector="reference", mode=str(mode), skills=[keys[i], keys[j]], statistic=diff,
                        threshold=0.0, groups=[_examples(ev, k, 5) for k in (keys[i], keys[j])],
                        agents=_agents(agents, np.c_[s[i], s[j]].T, np.c_[f[i], f[j]].T),
                        note="largest difference of empirical rates"))
    return out
