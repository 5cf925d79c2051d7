"""The learning worker process: `python -m skillorchestra_core.learning.worker RUN_ID --db URL`."""

from __future__ import annotations

import argparse
import os
import traceback

from skillorchestra_core.errors import StudioError
from skillorchestra_core.learning import runs
from skillorchestra_core.learning.pipeline import Cancelled, LearnOptions
from skillorchestra_core.learning.run import run_learning
from skillorchestra_core.processes import heartbeat, host


def work(db_url: str | None, run_id: int) -> str:
    run = runs.get_run(db_url, run_id)
    runs.update(db_url, run_id, status="running", pid=os.getpid(), owner_host=host())
    with heartbeat(lambda: runs.update(db_url, run_id), "learning-heartbeat"):  # a stopped beat: a dead worker
        return _work(db_url, run)


def _work(db_url: str | None, run) -> str:
    run_id = int(run.id)
    options = LearnOptions(**run.options)
    progress = dict(run.progress)

    def tell(stage: str, fraction: float, detail: str) -> None:
        progress[stage] = round(float(fraction), 4)
        runs.update(db_url, run_id, stage=stage, progress=dict(progress), detail=detail[:500])

    def done(s, report) -> None:  # in the version's transaction: both are written, or neither
        runs.update_in(s, run_id, status="done", version=report.version, report=report.to_dict())

    try:
        run_learning(db_url, run.handbook_name, options, version=run.parent_version, progress=tell,
                     cancelled=lambda: runs.cancel_requested(db_url, run_id), on_commit=done)
    except Cancelled as exc:
        runs.update(db_url, run_id, status="cancelled", error=str(exc))
        return "cancelled"
    except StudioError as exc:
        runs.update(db_url, run_id, status="failed", error=str(exc)[:2000])
        return "failed"
    except Exception as exc:  # noqa: BLE001  (recorded for the page; the traceback goes to stderr)
        traceback.print_exc()
        runs.update(db_url, run_id, status="failed", error=f"{type(exc).__name__}: {exc}"[:2000])
        return "failed"
    return "done"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("run_id", type=int)
    ap.add_argument("--db", default=None)
    args = ap.parse_args()
    work(args.db, args.run_id)


if __name__ == "__main__":
    main()
