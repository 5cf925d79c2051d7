import pytest
from sqlmodel import select

from skillorchestra_core.db.models import AuditLog, HandbookVersion, Trajectory
from skillorchestra_core.errors import ImportRejected, StudioError
from skillorchestra_core.evidence.ingest import OutcomeRow, ingest_outcomes
from skillorchestra_core.handbook.content import SkillSpec
from skillorchestra_core.handbook.store import commit_version, get_handbook, latest_content, load_version
from skillorchestra_core.learning import profile


@pytest.fixture
def db_session(any_db_session):
    """Every test here runs on SQLite and on PostgreSQL."""
    return any_db_session


def rows(n=6, score=lambda i: float(i % 2)):
    return [OutcomeRow(i + 1, f"q{i // 2}", f"text {i // 2}", ["a", "b"][i % 2], score(i), task="t") for i in range(n)]


def test_reimport_is_idempotent_and_makes_no_new_version(db_session):
    first = ingest_outcomes(db_session, "hb", rows(), source_label="f.csv", skills_from_task=True)
    again = ingest_outcomes(db_session, "hb", rows(), source_label="f.csv", skills_from_task=True)
    assert (first.version, first.created_version, first.trajectories_added) == (1, True, 6)
    assert (again.version, again.created_version, again.trajectories_added, again.trajectories_skipped) == (
        1, False, 0, 6)


def test_contradicting_evidence_is_rejected_with_line_numbers_and_changes_nothing(db_session):
    ingest_outcomes(db_session, "hb", rows(), source_label="f.csv")
    db_session.commit()
    with pytest.raises(ImportRejected) as err:
        ingest_outcomes(db_session, "hb", rows(score=lambda i: 1.0), source_label="g.csv")
    db_session.rollback()
    assert [b.line for b in err.value.bad_rows] == [1, 3, 5]
    assert "g.csv:1:" in str(err.value)
    assert len(db_session.exec(select(Trajectory)).all()) == 6
    assert len(db_session.exec(select(HandbookVersion)).all()) == 1


def test_new_evidence_makes_a_new_version_and_old_versions_keep_their_posteriors(db_session):
    ingest_outcomes(db_session, "hb", rows(), source_label="f.csv", skills_from_task=True)
    v1 = load_version(db_session, "hb", 1)
    before = profile.competence(profile.load_frames(db_session, v1))
    more = [OutcomeRow(i + 1, f"n{i}", f"new {i}", "a", 1.0, task="t") for i in range(4)]
    result = ingest_outcomes(db_session, "hb", more, source_label="g.csv", skills_from_task=True)
    assert result.version == 2
    after_v1 = profile.competence(profile.load_frames(db_session, load_version(db_session, "hb", 1)))
    v2 = profile.competence(profile.load_frames(db_session, load_version(db_session, "hb", 2)))
    assert before.equals(after_v1)
    assert v2.loc[v2.agent == "a", "n"].iloc[0] == before.loc[before.agent == "a", "n"].iloc[0] + 4


def test_commit_refuses_inconsistent_content_and_audits_versions(db_session):
    ingest_outcomes(db_session, "hb", rows(), source_label="f.csv")
    hb = get_handbook(db_session, "hb")
    parent, content = latest_content(db_session, hb.id)
    content.skills["x"] = SkillSpec("x", mode="nowhere")
    with pytest.raises(StudioError, match="unknown mode"):
        commit_version(db_session, hb, content, author="me", message="bad", parent=parent)
    content.skills["x"] = SkillSpec("x", mode="answer", name="X")
    version, created = commit_version(db_session, hb, content, author="me", message="add x", parent=parent)
    assert created and version.number == 2 and version.parent_id == parent.id
    actions = db_session.exec(select(AuditLog.action).where(AuditLog.entity_id == version.id)).all()
    assert "version.create" in actions


def test_frames_can_hold_out_validation_and_test_queries(db_session):
    data = [OutcomeRow(i + 1, f"q{i}", f"text {i}", "a", 1.0, task="t", split=["train", "val", "test"][i % 3])
            for i in range(9)]
    ingest_outcomes(db_session, "hb", data, source_label="f.csv", skills_from_task=True)
    v = load_version(db_session, "hb")
    frames = profile.load_frames(db_session, v)
    assert len(frames.evidence) == 9 and len(frames.outcomes) == 3  # learns from train by default
    assert frames.learned_from == "learned from 3 train queries"
    train = profile.load_frames(db_session, v, splits=("train",))
    assert set(train.outcomes["split"]) == {"train"} and len(train.outcomes) == 3
    assert profile.competence(train)["n"].iloc[0] == 3
