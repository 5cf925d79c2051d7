"""Run learning against the database: read, learn in memory, commit one version (its parent the version read)."""

from __future__ import annotations

from collections.abc import Callable

from sqlmodel import Session

from skillorchestra_core.db.engine import get_engine
from skillorchestra_core.db.models import HandbookVersion
from skillorchestra_core.handbook.store import commit_version, get_handbook
from skillorchestra_core.learning.inputs import read_inputs
from skillorchestra_core.learning.pipeline import LearnOptions, LearnReport, Progress, learn_content
from skillorchestra_core.llm import LlmClient
from skillorchestra_core.llm.log import save_calls


def llm_client(model: str) -> LlmClient:
    """A litellm client for `model` with the configured endpoint, key, timeout and retries."""
    from skillorchestra_core.llm import LiteLlmClient
    from skillorchestra_core.settings import get_settings

    st = get_settings()
    return LiteLlmClient(model, api_base=st.llm_api_base, api_key=st.llm_api_key, timeout_s=st.llm_timeout_s,
                         retries=st.llm_retries)


def run_learning(db_url: str | None, name: str, options: LearnOptions, *, version: int | None = None,
                 client: LlmClient | None = None, progress: Progress | None = None,
                 cancelled=None, on_commit: Callable[[Session, LearnReport], None] | None = None) -> LearnReport:
    """Learn from `name` (its latest version unless `version`) and commit the result as a new version.

    `on_commit(session, report)` writes in the version's own transaction (the worker marks its run done there, so a
    kill can never leave a written version under a run that says it wrote none)."""
    engine = get_engine(db_url)
    with Session(engine, expire_on_commit=False) as s:
        inputs = read_inputs(s, name, version)
    if options.llm and client is None:
        client = llm_client(options.llm)
    content, report = learn_content(inputs, options, client, progress, cancelled)
    message = options.message or _message(report)
    with Session(engine, expire_on_commit=False) as s:
        hb = get_handbook(s, name)
        parent = s.get(HandbookVersion, inputs.loaded.version_id)
        made, created = commit_version(s, hb, content, author=options.author, message=message,
                                       source=f"learn {options.method}", parent=parent)
        if client is not None:
            save_calls(s, client.calls.records)
        report.version, report.created = made.number, created
        if on_commit is not None:
            on_commit(s, report)
        s.commit()
    return report


def _message(report: LearnReport) -> str:
    added = sum(len(v) for v in report.skills_added.values())
    pairs = sum(report.attributed.values())
    return f"learned {report.method}: {added} skill(s) added, {pairs} train (query, mode) attributed"
