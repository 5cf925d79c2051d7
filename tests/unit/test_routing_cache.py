"""The compiled routing model cache on disk: hits, invalidation by a new version, other processes, damage."""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from support.handbooks import MINI_AGENTS, MINI_QA, build_mini_agents, build_mini_qa, qa_rows

from skillorchestra_core.db import session
from skillorchestra_core.evidence.ingest import OutcomeRow, ingest_outcomes
from skillorchestra_core.routing import build, cache
from skillorchestra_core.routing.engine import RouteOptions, route

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def url(db_url):
    with session(db_url) as s:
        build_mini_qa(s)
        build_mini_agents(s)
        s.commit()
    build.clear_memory_cache()
    return db_url


def _no_build(monkeypatch):
    def fail(*_a, **_k):
        raise AssertionError("the model was rebuilt instead of read from the cache")
    monkeypatch.setattr(build, "build_routing_model", fail)


def _files(url):
    return sorted(cache.cache_dir(url).glob("*.npz"))


def test_a_built_model_is_stored_and_read_back_identically(url, monkeypatch):
    with session(url) as s:
        built = {n: build.routing_model(s, n) for n in (MINI_QA, MINI_AGENTS)}
    assert len(_files(url)) == 2
    build.clear_memory_cache()
    _no_build(monkeypatch)
    with session(url) as s:
        for name, original in built.items():
            again = build.routing_model(s, name)
            assert again is not original and again.content_hash == original.content_hash
            for mode, t in original.modes.items():
                u = again.modes[mode]
                assert (u.agents, u.skills, u.models, u.prices, u.cost_source) == \
                       (t.agents, t.skills, t.models, t.prices, t.cost_source)
                np.testing.assert_array_equal(u.mean, t.mean)
                np.testing.assert_array_equal(u.ci_low, t.ci_low)
                np.testing.assert_array_equal(u.train_rate, t.train_rate)
            assert again.skill_queries == original.skill_queries and again.skills == original.skills
            assert dict(again.evidence.outcomes.items()) == dict(original.evidence.outcomes.items())
            for query in ("Which emperor ruled Rome in the year 500?", "How many years passed between x and y?"):
                for opts in (RouteOptions(execute="replay"), RouteOptions(router="oracle", lam=0.3)):
                    a, b = route(original, query, opts), route(again, query, opts)
                    assert a.model_dump(exclude={"created_at"}) == b.model_dump(exclude={"created_at"})


def test_a_new_version_misses_and_the_old_one_still_hits(url, monkeypatch):
    with session(url) as s:
        v1 = build.routing_model(s, MINI_QA)
        extra = [OutcomeRow(line=1, query_id="extra-1", query="What is 2 plus 2?", agent=a, score=1.0,
                            task="arithmetic", split="train", cost_usd=0.001) for a in ("big", "mid", "small")]
        ingest_outcomes(s, MINI_QA, extra, source_label="more", skills_from_task=True)
        s.commit()
        v2 = build.routing_model(s, MINI_QA)
    assert (v1.version, v2.version) == (1, 2) and v1.content_hash != v2.content_hash
    assert v2.evidence.lookup("what is 2 plus 2?") is not None and v1.evidence.lookup("What is 2 plus 2?") is None
    assert len([p for p in _files(url) if p.name.startswith(f"v{v2.version_id}-")]) == 1
    build.clear_memory_cache()
    _no_build(monkeypatch)
    with session(url) as s:
        assert build.routing_model(s, MINI_QA, 1).content_hash == v1.content_hash
        assert build.routing_model(s, MINI_QA).content_hash == v2.content_hash


def test_other_settings_are_other_entries(url):
    from skillorchestra_core.learning.competence import PriorConfig

    with session(url) as s:
        hier = build.routing_model(s, MINI_QA)
        flat = build.routing_model(s, MINI_QA, prior=PriorConfig("flat", 2.0))
    assert hier.settings["prior"] == "hierarchical" and flat.settings["prior"] == "flat"
    assert len(_files(url)) == 2 and not np.array_equal(hier.modes["answer"].mean, flat.modes["answer"].mean)


def test_the_cache_survives_a_new_process(url):
    with session(url) as s:
        expected = route(build.routing_model(s, MINI_QA), qa_rows()[0].query).chosen_agent
    script = (
        "import sys\n"
        "from skillorchestra_core.db import session\n"
        "from skillorchestra_core.routing import build\n"
        "from skillorchestra_core.routing.engine import route\n"
        "def fail(*a, **k): raise SystemExit('rebuilt')\n"
        "build.build_routing_model = fail\n"
        f"with session({url!r}) as s:\n"
        f"    print(route(build.routing_model(s, {MINI_QA!r}), {qa_rows()[0].query!r}).chosen_agent)\n"
        "print('pandas' in sys.modules, 'scipy.stats' in sys.modules)\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, cwd=ROOT,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    chosen, imported = out.stdout.split("\n")[:2]
    assert chosen == expected
    assert imported == "False False"  # a cache hit needs neither pandas nor scipy.stats


def test_a_damaged_or_foreign_file_is_rebuilt(url):
    with session(url) as s:
        first = build.routing_model(s, MINI_QA)
    (path,) = _files(url)
    path.write_bytes(b"not a zip file")
    build.clear_memory_cache()
    with session(url) as s:
        again = build.routing_model(s, MINI_QA)
    np.testing.assert_array_equal(again.modes["answer"].mean, first.modes["answer"].mean)
    assert path.read_bytes()[:2] == b"PK"  # rewritten


def test_no_file_cache_without_a_database_file():
    assert cache.cache_dir("sqlite://") is None and cache.cache_dir("sqlite:///:memory:") is None
    assert cache.cache_dir("postgresql+psycopg://u@h/db") is None
    assert cache.cache_dir("sqlite:////tmp/x/studio.db") == Path("/tmp/x/studio.db.routing")


def test_derived_state_is_stored_and_rebuilt_when_its_code_changes(url, monkeypatch):
    from skillorchestra_core.routing import activation, cache_state

    query = "Which emperor ruled Rome in the year 700?"
    with session(url) as s:
        built = build.routing_model(s, MINI_AGENTS)
        expected = {m: activation.activate_offline(built, m, query) for m in built.modes}
    build.clear_memory_cache()
    with session(url) as s:
        again = build.routing_model(s, MINI_AGENTS)
    assert {("retriever", m) for m in again.modes} <= set(again._cache)  # no rebuild needed
    assert ("activator", "answer") in again._cache  # the trained classifier too: no retraining
    r = activation.retriever(again, "search")
    assert type(r).__name__ == "SkillRetriever"
    assert r.leaves == activation.retriever(built, "search").leaves
    assert {m: activation.activate_offline(again, m, query) for m in again.modes} == expected
    route_a = route(built, query, RouteOptions()).model_dump(exclude={"created_at"})
    assert route(again, query, RouteOptions()).model_dump(exclude={"created_at"}) == route_a

    monkeypatch.setattr(cache_state, "_digest", lambda value: "changed code")
    build.clear_memory_cache()
    with session(url) as s:
        stale = build.routing_model(s, MINI_AGENTS)
    assert not stale._cache  # nothing from older code is reused...
    assert route(stale, query, RouteOptions()).model_dump(exclude={"created_at"}) == route_a  # ...it is rebuilt


def test_memos_of_derived_state_are_not_stored(url):
    """Private attributes (lookup tables a featuriser builds on first use) are rebuilt, not copied into the file."""
    from skillorchestra_core.routing import activation, cache_state

    query = "Which emperor ruled Rome in the year 700?"
    with session(url) as s:
        built = build.routing_model(s, MINI_AGENTS)
    expected = activation.activate_offline(built, "answer", query)  # the featuriser's memos now exist
    assert "_lookup" in vars(built._cache[("activator", "answer")].classifier.featuriser)
    arrays: dict = {}
    entries = cache_state.encode(built, arrays)
    built._cache.clear()
    cache_state.decode(entries, arrays, built)
    featuriser = built._cache[("activator", "answer")].classifier.featuriser
    assert [k for k in vars(featuriser) if k.startswith("_")] == []
    assert activation.activate_offline(built, "answer", query) == expected


def test_a_save_removes_the_temp_files_of_writers_killed_mid_save(tmp_path):
    folder = tmp_path / "db.routing"
    folder.mkdir()
    dead = subprocess.Popen(["true"])
    dead.wait()
    orphan, unnamed = folder / f"{dead.pid}-abc.tmp", folder / "tmpxyz.tmp"
    live = folder / f"{os.getpid()}-busy.tmp"  # a writer still saving: left alone
    for p in (orphan, unnamed, live):
        p.write_bytes(b"partial")
    cache._prune(folder)
    assert not orphan.exists() and not unnamed.exists() and live.exists()
