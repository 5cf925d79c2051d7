"""Run the detectors on a stored version: the Bayes-factor detectors, or the reference code's rules."""

from __future__ import annotations

import numpy as np
from sqlmodel import Session

from skillorchestra_core.errors import StudioError
from skillorchestra_core.handbook.store import LoadedVersion, load_version
from skillorchestra_core.refinement import roles
from skillorchestra_core.refinement.detect import Detection, DetectorConfig, detect_merges, detect_splits
from skillorchestra_core.refinement.evidence import RefinementEvidence, load_evidence
from skillorchestra_core.refinement.reference_rules import reference_merges, reference_splits
from skillorchestra_core.refinement.store import refresh, save_detection

DETECTORS = ("bayes", "reference")
DEFAULT_SEED = 0


def run_detectors(ev: RefinementEvidence, detector: str = "bayes", rng: np.random.Generator | None = None,
                  cfg: DetectorConfig = DetectorConfig()) -> Detection:
    """Splits then merges, each sorted by decreasing statistic."""
    if detector not in DETECTORS:
        raise StudioError(f"unknown detector {detector!r}; use one of {', '.join(DETECTORS)}")
    rng = rng if rng is not None else np.random.default_rng(DEFAULT_SEED)
    if detector == "reference":
        parts = [reference_splits(ev), reference_merges(ev)]
    else:
        parts = [detect_splits(ev, rng, cfg), detect_merges(ev, cfg)]
    return Detection([c for p in parts for c in p.candidates], [x for p in parts for x in p.scored])


def detect_version(s: Session, loaded: LoadedVersion, detector: str = "bayes", seed: int = DEFAULT_SEED,
                   cfg: DetectorConfig = DetectorConfig()) -> Detection:
    return run_detectors(load_evidence(s, loaded), detector, np.random.default_rng(seed), cfg)


def detect_and_store(s: Session, name: str, detector: str = "bayes", seed: int = DEFAULT_SEED,
                     actor: str = "system", cfg: DetectorConfig = DetectorConfig()) -> list[int]:
    """Detect on the latest version of `name` and store the candidates (pending ones are not duplicated). Candidates
    of older versions are carried forward or superseded first. Returns the candidate ids, strongest first."""
    loaded = load_version(s, name)
    refresh(s, loaded.handbook_id)
    ids = save_detection(s, loaded, detect_version(s, loaded, detector, seed, cfg).candidates, actor)
    s.commit()
    return ids


def flag_for_review(s: Session, name: str, skills: list[str], actor: str, note: str = "",
                    seed: int = DEFAULT_SEED) -> int:
    """A person asks for a review: one skill -> a split candidate, two sibling leaf skills -> a merge candidate,
    with the same evidence and statistic as the detectors compute, kept whatever the statistic. Returns its id."""
    who = roles.require(s, actor, "viewer", "flag a skill for review")
    loaded = load_version(s, name)
    unknown = [k for k in skills if k not in loaded.content.skills]
    if unknown or len(skills) not in (1, 2):
        raise StudioError(f"flag one skill (split) or two sibling skills (merge) of {loaded.label}; "
                          f"unknown: {', '.join(unknown) or '-'}")
    ev = load_evidence(s, loaded)
    found = (detect_splits(ev, np.random.default_rng(seed), cfg=DetectorConfig(), only=skills[0]) if len(skills) == 1
             else detect_merges(ev, DetectorConfig(), only=(skills[0], skills[1])))
    if not found.candidates:
        reason = found.scored[0].reason if found.scored else "no train evidence attributed directly to it"
        raise StudioError(f"cannot review {' + '.join(skills)}: {reason}")
    record = found.candidates[0].model_copy(update={"detector": "flag", "note": f"flagged by {who}: {note}".strip()})
    ids = save_detection(s, loaded, [record], who)
    s.commit()
    return ids[0]
