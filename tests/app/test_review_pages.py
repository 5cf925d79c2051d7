"""AppTest of the review pages: queue (evidence, proposal, diff, decisions, roles, two reviewers), version history
(diff, restore) and the audit log."""

import pytest
from sqlmodel import select

from skillorchestra_core.db import session
from skillorchestra_core.db.models import HandbookVersion
from skillorchestra_core.refinement import roles
from skillorchestra_core.refinement.proposing import propose_pending
from skillorchestra_core.refinement.run import detect_and_store

SPLIT = "answer.math.word_problems"


@pytest.fixture
def queued(app_db):
    with session(app_db) as s:
        ids = detect_and_store(s, "demo-qa")
        propose_pending(s, "demo-qa")
    return ids


def _review(open_page, who="alice"):
    return open_page("pages/review.py", {"handbook": "demo-qa"}, {"ctx:reviewer": who})


def _msg(element) -> str:
    """A flash message's text (the page escapes Markdown in it: skill keys are data)."""
    return element.value.replace("\\", "").replace("\u2060", "")  # escapes and the autolink-breaking joiner


def _frame(at, column):
    """The first dataframe on the page with `column`."""
    return next(d.value for d in at.dataframe if column in d.value.columns)


def _versions(url):
    with session(url) as s:
        return sorted(s.exec(select(HandbookVersion.number).where(HandbookVersion.handbook_id == 1)).all())


def test_queue_shows_evidence_proposal_and_the_diff_it_would_cause(queued, app_db, open_page):
    at = _review(open_page)
    assert not at.exception, at.exception
    assert at.title[0].value == "Review queue"
    assert _msg(at.subheader[0]) == f"#{queued[0]} split {SPLIT}"
    evidence = _frame(at, "log BF")
    assert len(evidence) == 6 and {"group 1: interval", "group 2: mean"} <= set(evidence.columns)
    assert "percent" in " ".join(_frame(at, "example")["example"])
    assert len(_frame(at, "evidence queries")) == 2
    routing = _frame(at, "after")
    assert len(routing) > 0 and (routing["before"] != routing["after"]).all()
    assert {m.label: m.value for m in at.metric}["skills added"] == "2"
    assert int({m.label: m.value for m in at.metric}["val routing changes"]) > 0
    assert "Local mode" in " ".join(c.value for c in at.caption)
    from skillorchestra_core.refinement.run import flag_for_review

    with session(app_db) as s:  # a note with markup is shown literally
        flag_for_review(s, "demo-qa", ["answer.code.sql"], "carol", note="**bold** <b>x</b>")
    at.selectbox(key="rev:status").set_value("(all)").run()
    at.button(key="rev:prev").click().run()  # from the first to the last: the flagged candidate
    caption = next(c.value for c in at.caption if "flagged by carol" in c.value)
    assert "\\*\\*bold\\*\\* \\<b\\>x\\</b\\>" in caption


def test_approve_then_reject_with_reason_and_next(queued, app_db, open_page):
    at = _review(open_page)
    at.button(key="rev:approve").click().run()
    assert not at.exception
    assert "-> v2" in _msg(at.success[0])
    assert _versions(app_db) == [1, 2]
    at.text_input(key=f"rev:reason:{queued[1]}").set_value("dates and durations differ in kind").run()
    at.button(key="rev:reject").click().run()
    assert "rejected" in _msg(at.success[0])
    at.selectbox(key="rev:status").set_value("rejected").run()
    assert at.dataframe[0].value["note"].tolist() == ["dates and durations differ in kind"]


def test_approve_with_edits_records_edited(queued, app_db, open_page):
    at = _review(open_page)
    at.button(key="rev:next").click().run()  # the first merge
    cid = queued[1]
    assert _msg(at.subheader[0]).startswith(f"#{cid} merge")
    key = [t.key for t in at.text_input if t.key and t.key.startswith(f"rev:edit:{cid}:") and t.key.endswith(":name")]
    at.text_input(key=key[0]).set_value("Calendar reasoning").run()
    assert not at.exception
    at.button(key="rev:approve_edits").click().run()
    assert "edited" in _msg(at.success[0])
    from skillorchestra_core.handbook.store import load_version

    with session(app_db) as s:
        names = [k.name for k in load_version(s, "demo-qa").content.skills.values()]
    assert "Calendar reasoning" in names


def test_viewer_cannot_decide_and_a_second_reviewer_sees_who_won(queued, app_db, open_page):
    with session(app_db) as s:
        roles.add_member(s, "alice", "admin")
        roles.add_member(s, "bob", "reviewer")
        roles.add_member(s, "vera", "viewer")
        s.commit()
    viewer = _review(open_page, "vera")
    viewer.button(key="rev:approve").click().run()
    assert "viewer" in _msg(viewer.error[0]) and _versions(app_db) == [1]
    a, b = _review(open_page, "alice"), _review(open_page, "bob")
    a.button(key="rev:approve").click().run()
    b.button(key="rev:approve").click().run()
    assert "-> v2" in _msg(a.success[0])
    assert "already approved by alice" in _msg(b.warning[0])
    assert _versions(app_db) == [1, 2]


def test_history_diffs_and_restores_and_audit_lists_decisions(queued, app_db, open_page):
    _review(open_page).button(key="rev:approve").click().run()
    at = open_page("pages/history.py", {"handbook": "demo-qa"}, {"ctx:reviewer": "alice"})
    assert not at.exception, at.exception
    assert at.subheader[0].value == "v1 → v2"
    assert {m.label: m.value for m in at.metric}["skills added"] == "2"
    at.button(key="hist:restore_btn").click().run()
    assert "restored v1 as v3" in _msg(at.success[0])
    assert _versions(app_db) == [1, 2, 3]
    audit = open_page("pages/audit.py", {"handbook": "demo-qa"})
    assert not audit.exception
    actions = audit.dataframe[0].value["action"].tolist()
    assert actions[:2] == ["version.restore", "version.create"] and "refinement.approved" in actions
    audit.selectbox(key="audit:action").set_value("refinement.approved").run()
    assert audit.dataframe[0].value["who"].tolist() == ["alice"]
    assert len(audit.json) >= 2


def test_pages_without_candidates_or_reviewer(app_db, open_page):
    at = open_page("pages/review.py", {"handbook": "demo-qa"}, {"ctx:reviewer": ""})
    assert not at.exception
    assert any("Run detection" in i.value for i in at.info)
    at.button(key="rev:detect").click().run()
    assert "candidate(s) found" in _msg(at.success[0])
    at.button(key="rev:approve").click().run()
    assert "named person" in _msg(at.error[0])


def test_signed_in_user_is_the_reviewer_when_oidc_is_configured(queued, app_db, app_path):
    from streamlit.testing.v1 import AppTest

    from skillorchestra_core.refinement.history import audit_rows

    at = AppTest.from_file(app_path, default_timeout=60)
    at.secrets["auth"] = {"redirect_uri": "http://127.0.0.1:8501/oauth2callback", "cookie_secret": "x",
                          "client_id": "studio", "client_secret": "y",
                          "server_metadata_url": "http://127.0.0.1:9/.well-known/openid-configuration"}
    at.user = {"is_logged_in": True, "email": "rev@example.org", "name": "Rev"}
    at.query_params["handbook"] = "demo-qa"
    at.session_state["ctx:reviewer"] = "typed-name"  # ignored when a login is configured
    at.run()
    at = at.switch_page("pages/review.py").run()
    assert not at.exception, at.exception
    assert "Signed in as rev@example.org" in " ".join(_msg(c) for c in at.caption)
    at.button(key="rev:approve").click().run()
    assert "-> v2" in _msg(at.success[0])
    with session(app_db) as s:
        assert audit_rows(s, "demo-qa")[0].actor == "rev@example.org"
