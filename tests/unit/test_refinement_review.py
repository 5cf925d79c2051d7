"""Review decisions: one transaction each, honest counts after split and merge, roles, conflicts, supersession."""

import dataclasses
import subprocess
import sys
import time
from pathlib import Path

import pytest
from sqlmodel import select

from skillorchestra_core.db import session
from skillorchestra_core.db.models import AuditLog, HandbookVersion
from skillorchestra_core.errors import Conflict, PermissionDenied, StudioError
from skillorchestra_core.handbook.store import load_version
from skillorchestra_core.learning import profile
from skillorchestra_core.refinement import review, roles
from skillorchestra_core.refinement.records import Proposal
from skillorchestra_core.refinement.run import detect_and_store, flag_for_review
from skillorchestra_core.refinement.store import list_candidates

ROOT = Path(__file__).resolve().parents[2]
SPLIT = ("answer.math.word_problems",)
MERGE = ("answer.entities.capitals", "answer.entities.currencies")


def _train_counts(s, number):
    loaded = load_version(s, "demo-qa", number)
    frames = profile.load_frames(s, loaded)
    frames = dataclasses.replace(frames, outcomes=frames.outcomes[frames.outcomes["split"] == "train"])
    return profile.competence(frames).set_index(["agent", "skill"])[["S", "F"]]


def _by_skills(s):
    return {tuple(c.skills): c for c in list_candidates(s, "demo-qa")}


@pytest.fixture
def demo(any_demo_db_url):
    """The demo with detected candidates, on SQLite and on PostgreSQL."""
    with session(any_demo_db_url) as s:
        detect_and_store(s, "demo-qa")
        yield s


def _audit(s):
    return s.exec(select(AuditLog).where(AuditLog.entity == "refinement_candidate").order_by(AuditLog.id)).all()


def test_split_then_merge_count_exactly_and_leave_an_audit_trail(demo):
    s = demo
    before = _train_counts(s, 1)
    split = _by_skills(s)[SPLIT]
    done = review.approve(s, split.id, "alice")
    assert (done.status, done.version) == ("approved", 2)
    after = _train_counts(s, 2)
    children = [k for k in load_version(s, "demo-qa", 2).content.skills if k.startswith(SPLIT[0] + ".")]
    assert len(children) == 2
    for agent in before.index.get_level_values("agent").unique():
        kids = after.loc[[(agent, k) for k in children]].sum()
        assert kids["S"] == pytest.approx(before.loc[(agent, SPLIT[0]), "S"])
        assert kids["F"] == pytest.approx(before.loc[(agent, SPLIT[0]), "F"])
        assert after.loc[(agent, SPLIT[0])].tolist() == pytest.approx(before.loc[(agent, SPLIT[0])].tolist())

    merge = _by_skills(s)[MERGE]
    assert (merge.status, merge.version) == ("pending", 2)  # carried forward: the split did not touch it
    edits = Proposal(source="human", skills=[{"key": "answer.entities.country_facts", "name": "Country facts"}])
    done = review.approve(s, merge.id, "bob", edits=edits, seen_row_version=merge.row_version)
    assert (done.status, done.version) == ("edited", 3)
    merged = _train_counts(s, 3)
    for agent in before.index.get_level_values("agent").unique():
        total = before.loc[[(agent, k) for k in MERGE]].sum()
        assert merged.loc[(agent, "answer.entities.country_facts")].tolist() == pytest.approx(total.tolist())

    audit = _audit(s)
    assert [(a.actor, a.action) for a in audit] == [("alice", "refinement.approved"), ("bob", "refinement.edited")]
    assert audit[1].details["before"]["version"] == 2 and audit[1].details["after"]["version"] == 3
    assert [k["key"] for k in audit[1].details["before"]["skills"]] == list(MERGE)
    assert [k["key"] for k in audit[1].details["after"]["skills"]] == ["answer.entities.country_facts"]
    v3 = s.exec(select(HandbookVersion).where(HandbookVersion.number == 3)).one()
    assert v3.author == "bob" and v3.parent_id == s.exec(select(HandbookVersion.id).where(
        HandbookVersion.number == 2)).one()


def test_second_decision_names_the_winner_and_writes_nothing(demo):
    s = demo
    merge = _by_skills(s)[MERGE]
    review.approve(s, merge.id, "alice", seen_row_version=merge.row_version)
    with pytest.raises(Conflict, match=r"already approved by alice at \d{4}-\d\d-\d\d"):
        review.reject(s, merge.id, "bob", "looks wrong", seen_row_version=merge.row_version)
    assert len(_audit(s)) == 1


def _approve_elsewhere_after_reading(monkeypatch, url, candidate_id):
    """Between a decision's read of its candidate and its compare-and-set, another reviewer (own session) approves
    `candidate_id`, which carries the decided candidate forward to the new version."""
    read = review._current
    calls = []

    def read_then_race(s, cid, seen):
        row = read(s, cid, seen)
        if cid == candidate_id:
            return row
        calls.append(row.row_version)
        if len(calls) == 1:
            with session(url) as other:
                review.approve(other, candidate_id, "carol")
        return row

    monkeypatch.setattr(review, "_current", read_then_race)
    return calls


def test_a_carry_forward_under_a_decision_is_decided_on_the_new_version(demo, any_demo_db_url, monkeypatch):
    s = demo
    split, merge = _by_skills(s)[SPLIT], _by_skills(s)[MERGE]
    reads = _approve_elsewhere_after_reading(monkeypatch, any_demo_db_url, split.id)
    done = review.reject(s, merge.id, "bob", "not now")
    assert done.status == "rejected" and len(reads) == 2 and reads[1] == reads[0] + 1
    after = _by_skills(s)[MERGE]
    assert (after.status, after.version, after.decided_by) == ("rejected", 2, "bob")
    assert [(a.actor, a.action) for a in _audit(s)] == [("carol", "refinement.approved"),
                                                        ("bob", "refinement.rejected")]


def test_a_carry_forward_under_a_decision_made_on_what_was_seen_is_a_conflict(demo, any_demo_db_url, monkeypatch):
    s = demo
    split, merge = _by_skills(s)[SPLIT], _by_skills(s)[MERGE]
    _approve_elsewhere_after_reading(monkeypatch, any_demo_db_url, split.id)
    with pytest.raises(Conflict, match=rf"candidate #{merge.id} changed since you saw it"):
        review.approve(s, merge.id, "bob", seen_row_version=merge.row_version)
    after = _by_skills(s)[MERGE]
    assert (after.status, after.version) == ("pending", 2)
    assert len(s.exec(select(HandbookVersion).where(HandbookVersion.number == 3)).all()) == 0
    assert [a.actor for a in _audit(s)] == ["carol"]


def test_reject_needs_a_reason_and_records_it(demo):
    s = demo
    split = _by_skills(s)[SPLIT]
    with pytest.raises(StudioError, match="needs a reason"):
        review.reject(s, split.id, "alice", "  ")
    review.reject(s, split.id, "alice", "not now")
    after = _by_skills(s)[SPLIT]
    assert (after.status, after.decided_by, after.decision_note) == ("rejected", "alice", "not now")
    assert _audit(s)[0].details["reason"] == "not now"
    assert len(s.exec(select(HandbookVersion)).all()) == 2  # demo-qa v1 + demo-agents v1: no new version


def test_roles_are_enforced_in_core(demo):
    s = demo
    assert roles.role_of(s, "anyone") == "admin"  # open mode: nobody registered yet
    roles.add_member(s, "alice", "admin")
    roles.add_member(s, "vera", "viewer", actor="alice")
    s.commit()
    merge = _by_skills(s)[MERGE]
    with pytest.raises(PermissionDenied, match="'vera' is a viewer"):
        review.approve(s, merge.id, "vera")
    with pytest.raises(PermissionDenied, match="viewer"):
        review.reject(s, merge.id, "stranger", "no")
    with pytest.raises(PermissionDenied, match="manage members"):
        roles.add_member(s, "mallory", "admin", actor="vera")
    with pytest.raises(PermissionDenied, match="named person"):
        review.approve(s, merge.id, " ")
    roles.add_member(s, "vera", "reviewer", actor="alice")
    assert review.approve(s, merge.id, "vera").status == "approved"


def test_candidates_about_changed_skills_are_superseded(demo):
    s = demo
    flagged = flag_for_review(s, "demo-qa", list(SPLIT), "carol", note="mixed problems")
    detected = [c for c in list_candidates(s, "demo-qa") if tuple(c.skills) == SPLIT and c.detector == "bayes"][0]
    assert flagged != detected.id
    review.approve(s, detected.id, "alice")
    views = {c.id: c for c in list_candidates(s, "demo-qa")}
    assert views[flagged].status == "superseded" and "v2" in views[flagged].decision_note
    with pytest.raises(Conflict, match="superseded"):
        review.approve(s, flagged, "alice")


def test_flagging_unknown_or_evidence_less_skills_is_a_clear_error(demo):
    with pytest.raises(StudioError, match="unknown: answer.nope"):
        flag_for_review(demo, "demo-qa", ["answer.nope"], "carol")
    with pytest.raises(StudioError, match="cannot review answer.math"):
        flag_for_review(demo, "demo-qa", ["answer.math"], "carol")  # a category: no direct evidence


APPROVER = """
import sys, time
from skillorchestra_core.db import session
from skillorchestra_core.errors import Conflict
from skillorchestra_core.refinement import review
url, cid, who, start = sys.argv[1], int(sys.argv[2]), sys.argv[3], float(sys.argv[4])
with session(url) as s:
    import skillorchestra_core.refinement.store as st
    print("module", st.__file__, flush=True)
    time.sleep(max(0.0, start - time.time()))
    try:
        print("won", review.approve(s, cid, who).version, flush=True)
    except Conflict as exc:
        print("lost", exc, flush=True)
"""


def test_two_processes_approving_one_candidate_make_one_version_and_one_audit_row(demo, any_demo_db_url):
    s = demo
    cid = _by_skills(s)[MERGE].id
    start = time.time() + 4.0  # both processes are ready well before this instant
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}
    procs = [subprocess.Popen([sys.executable, "-c", APPROVER, any_demo_db_url, str(cid), who, str(start)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT)
             for who in ("alice", "bob")]
    outs = [p.communicate(timeout=120) for p in procs]
    lines = [o[0].strip().splitlines() for o in outs]
    assert all(str(ROOT) in ls[0] for ls in lines), outs  # the worktree's code ran
    results = sorted(ls[-1] for ls in lines)
    assert results[0].startswith("lost") and results[1] == "won 2", outs
    winner = "alice" if "won" in lines[0][-1] else "bob"
    assert f"already approved by {winner}" in results[0]
    s.expire_all()
    versions = s.exec(select(HandbookVersion.number)).all()
    assert sorted(versions) == [1, 1, 2]  # demo-agents v1, demo-qa v1 and exactly one new demo-qa version
    assert [(a.actor, a.action) for a in _audit(s)] == [(winner, "refinement.approved")]


def test_diff_reports_moved_posteriors_after_new_evidence(demo):
    from skillorchestra_core.evidence.ingest import OutcomeRow, ingest_outcomes
    from skillorchestra_core.refinement.diff import diff_versions

    s = demo
    # 300 new train failures of one agent: its pooled rate, hence the prior of every skill of it, drops.
    rows = [OutcomeRow(i + 1, f"new-{i}", f"new question {i}", "qwen2.5-7b-instruct", 0.0, split="train")
            for i in range(300)]
    ingest_outcomes(s, "demo-qa", rows, source_label="more.csv")
    s.commit()
    d = diff_versions(s, "demo-qa", 1, 2)
    assert d.skills_added == d.skills_removed == d.skills_changed == []
    assert d.posteriors and {p["agent"] for p in d.posteriors} == {"qwen2.5-7b-instruct"}
    assert all(p["delta"] < 0 and p["after"] == pytest.approx(p["before"] + p["delta"], abs=1e-3)
               for p in d.posteriors)


def test_a_merged_key_equal_to_a_source_key_keeps_the_merged_skill(demo):
    s = demo
    merge = _by_skills(s)[MERGE]
    edits = Proposal(source="human", skills=[{"key": MERGE[0], "name": "Capitals and currencies"}])
    review.approve(s, merge.id, "alice", edits=edits)
    content = load_version(s, "demo-qa").content
    assert MERGE[0] in content.skills and MERGE[1] not in content.skills
    assert content.skills[MERGE[0]].name == "Capitals and currencies"
    assert not any(k == MERGE[1] for (_, _, k) in content.attributions)
