"""Versions are safe: commits are compare-and-set, old versions never change under concurrent writers, edits keep
unrelated counts and an acyclic tree, and the demo is the same from any process."""

from __future__ import annotations

import os
import subprocess
import sys
import threading

import pytest
from sqlmodel import select

from skillorchestra_core.db import dispose_engines, session
from skillorchestra_core.db.engine import write_with_retry
from skillorchestra_core.db.models import Query
from skillorchestra_core.errors import Conflict, StudioError
from skillorchestra_core.evidence.batches import batch_digests
from skillorchestra_core.evidence.ingest import OutcomeRow, ingest_outcomes
from skillorchestra_core.handbook.content import (
    AgentSpec,
    HandbookContent,
    ImportedCounts,
    SkillSpec,
    validate_content,
)
from skillorchestra_core.handbook.edits import merge_skills, split_skill
from skillorchestra_core.handbook.store import (
    commit_version,
    get_handbook,
    get_version,
    list_versions,
    load_content,
    load_version,
)
from skillorchestra_core.learning import profile


def _rows(tag: str, n: int = 20):
    return [OutcomeRow(i + 1, f"{tag}-{i}", f"question {tag} {i}", agent, float((i + k) % 3 == 0), task=f"t{i % 2}",
                       split="train") for i in range(n) for k, agent in enumerate(("a", "b"))]


def _fingerprint(s, name, number):
    v = load_version(s, name, number)
    comp = profile.competence(profile.load_frames(s, v))
    keys = dict(s.exec(select(Query.id, Query.ext_id).where(Query.handbook_id == v.handbook_id)).all())
    recomputed = v.content.content_hash(keys, batch_digests(s, v.content.evidence_batches))
    return v.content_hash, recomputed, comp[["agent", "skill", "alpha", "beta"]].to_records(index=False).tolist()


def test_concurrent_imports_leave_every_version_unchanged(any_db_url):
    """8 writers import into one handbook at once; each records its version's posteriors right after committing;
    afterwards every version still has them and still matches its content hash."""
    with session(any_db_url) as s:  # create the schema once, before the race
        s.commit()
    seen, errors = {}, []

    def importer(k: int) -> None:
        try:
            result = write_with_retry(lambda s: ingest_outcomes(s, "race", _rows(f"w{k}"), source_label=f"w{k}",
                                                                skills_from_task=True), any_db_url)
            with session(any_db_url) as s:
                seen[result.version] = _fingerprint(s, "race", result.version)
        except Exception as exc:  # reported below: the test must see every failure
            errors.append(repr(exc))

    threads = [threading.Thread(target=importer, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert sorted(seen) == list(range(1, 9))
    with session(any_db_url) as s:
        for number, (stored, recomputed, comp) in seen.items():
            again = _fingerprint(s, "race", number)
            assert stored == recomputed == again[0] == again[1]
            assert again[2] == comp
        versions = list_versions(s, "race")
        assert [len(load_content(s, v.id).evidence_batches) for v in versions] == list(range(1, 9))
    dispose_engines()


def _edit(url, description, barrier):
    with session(url) as s:
        hb = get_handbook(s, "hb")
        parent = get_version(s, "hb")
        content = load_content(s, parent.id)
        content.skills["answer.t0"].description = description
        barrier.wait()  # both editors have read v1 before either commits
        version, _ = commit_version(s, hb, content, author=description, message="edit", parent=parent)
        s.commit()
        return version.number


def test_two_editors_on_one_parent_one_wins_one_conflict(any_db_url):
    with session(any_db_url) as s:
        ingest_outcomes(s, "hb", _rows("x"), source_label="x", skills_from_task=True)
        s.commit()
    barrier, results = threading.Barrier(2), {}

    def run(who):
        try:
            results[who] = _edit(any_db_url, who, barrier)
        except Conflict as exc:
            results[who] = exc

    threads = [threading.Thread(target=run, args=(w,)) for w in ("alice", "bob")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    winners = [w for w, r in results.items() if r == 2]
    losers = [r for r in results.values() if isinstance(r, Conflict)]
    assert len(winners) == 1 and len(losers) == 1
    assert f"v2 by {winners[0]}" in str(losers[0]) and "nothing was written" in str(losers[0])
    with session(any_db_url) as s:
        assert [v.number for v in list_versions(s, "hb")] == [1, 2]
        assert load_version(s, "hb").content.skills["answer.t0"].description == winners[0]
    dispose_engines()


def test_a_stale_editor_gets_a_conflict_and_writes_nothing(db_url):
    with session(db_url) as s:
        ingest_outcomes(s, "hb", _rows("x"), source_label="x", skills_from_task=True)
        s.commit()
    with session(db_url) as s:
        v1 = get_version(s, "hb")
        stale = load_content(s, v1.id)
    with session(db_url) as s:
        ingest_outcomes(s, "hb", _rows("y"), source_label="y", skills_from_task=True, author="carol")
        s.commit()
    stale.skills["answer.t0"].name = "renamed"
    with session(db_url) as s:
        with pytest.raises(Conflict, match=r"newer version v2 by carol at \d{4}-\d\d-\d\d"):
            commit_version(s, get_handbook(s, "hb"), stale, author="dave", message="late",
                           parent=get_version(s, "hb", 1))
        s.rollback()
        assert [v.number for v in list_versions(s, "hb")] == [1, 2]


def _imported_content() -> HandbookContent:
    c = HandbookContent()
    c.add_mode("m")
    for key in ("x", "y"):
        c.skills[key] = SkillSpec(key, "m")
    c.agents[("a", "m")] = AgentSpec("a", "m")
    c.imported[("a", "m", "x")] = ImportedCounts("a", "m", "x", 3, 40)
    c.imported[("a", "m", "y")] = ImportedCounts("a", "m", "y", 80, 2)
    return c


def _mean(c: HandbookContent, skill: str) -> float:
    comp = profile.competence(profile.frames_from_content(c))
    return float(comp.set_index("skill").loc[skill, "mean"])


def test_split_keeps_unrelated_imported_counts():
    c = _imported_content()
    before = _mean(c, "y")
    out = split_skill(c, "x", [SkillSpec("x.a", "m"), SkillSpec("x.b", "m")], {})
    assert out.imported[("a", "m", "y")] == c.imported[("a", "m", "y")]
    assert _mean(out, "y") == before  # the split of x moves neither y's counts nor its prior
    assert _mean(out, "x") == _mean(c, "x")


def test_merge_keeps_unrelated_counts_and_cannot_make_a_loop():
    c = _imported_content()
    c.skills["z"] = SkillSpec("z", "m")
    c.imported[("a", "m", "z")] = ImportedCounts("a", "m", "z", 5, 5)
    out = merge_skills(c, "x", "y", SkillSpec("xy", "m"))
    assert out.imported[("a", "m", "z")] == c.imported[("a", "m", "z")]
    with pytest.raises(StudioError, match="cannot be its own parent"):
        merge_skills(c, "x", "y", SkillSpec("xy", "m", parent_key="x"))


def test_validate_content_rejects_parent_cycles():
    c = HandbookContent()
    c.add_mode("m")
    c.skills["p"] = SkillSpec("p", "m", parent_key="q")
    c.skills["q"] = SkillSpec("q", "m", parent_key="p")
    c.skills["self"] = SkillSpec("self", "m", parent_key="self")
    problems = validate_content(c)
    assert any("cycle: p -> q -> p" in p for p in problems)
    assert any("cycle: self -> self" in p for p in problems)


def test_the_demo_is_the_same_from_any_hash_seed(tmp_path):
    code = ("import sys; from skillorchestra_core.db import session; from skillorchestra_core.demo import build_demo;"
            "from skillorchestra_core.handbook.store import get_version\n"
            "with session(sys.argv[1]) as s:\n    build_demo(s); s.commit()\n"
            "    print(get_version(s, 'demo-qa').content_hash, get_version(s, 'demo-agents').content_hash)")
    hashes = set()
    for seed in ("1", "2", "3"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        out = subprocess.run([sys.executable, "-c", code, f"sqlite:///{tmp_path / f'd{seed}.db'}"], env=env,
                             capture_output=True, text=True, check=True, cwd=os.getcwd())
        hashes.add(out.stdout.strip())
    assert len(hashes) == 1


def test_a_selection_candidate_never_becomes_the_latest_version(db_url):
    with session(db_url) as s:
        ingest_outcomes(s, "hb", _rows("x"), source_label="x", skills_from_task=True)
        s.commit()
        v1 = get_version(s, "hb")
        branch = load_content(s, v1.id)
        branch.metadata["candidate"] = {"name": "depth0"}
        candidate, _ = commit_version(s, get_handbook(s, "hb"), branch, author="sel", message="candidate",
                                      parent=v1, branch=True, force=True)
        s.commit()
        assert candidate.number == 2 and get_version(s, "hb").number == 1
        edited = load_content(s, v1.id)
        edited.skills["answer.t0"].name = "renamed"  # an editor on v1 is not in conflict with the candidate
        v3, _ = commit_version(s, get_handbook(s, "hb"), edited, author="ed", message="edit", parent=v1)
        s.commit()
        assert v3.number == 3 and get_version(s, "hb").number == 3
        with pytest.raises(StudioError, match="branch=True"):
            commit_version(s, get_handbook(s, "hb"), branch, author="sel", message="x", parent=v3)
