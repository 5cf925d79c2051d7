"""Run the detectors on a stored version: the Bayes-factor detectors, or the reference code's rules."""

from __future__ import annotations

import numpy as np
from sqlmodel import Session

from skillorchestra_core.errors import StudioError
from skillorchestra_core.handbook.store import LoadedVersion
from skillorchestra_core.refinement.detect import Detection, DetectorConfig, detect_merges, detect_splits
from skillorchestra_core.refinement.evidence import RefinementEvidence, load_evidence
from skillorchestra_core.refinement.reference_rules import reference_merges, reference_splits

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
