"""Review queue: split and merge candidates with their evidence and proposal, the diff approving one would cause,
and approve / approve with edits / reject. Shortcuts: A approve, E approve with edits, X reject, J/K next/previous."""

import streamlit as st

from pages.components.context import open_session
from pages.components.review_widgets import review_page_header, run_action, table
from pages.components.shell import ensure_app_shell
from pages.components.trace_view import md
from skillorchestra_core.refinement import views
from skillorchestra_core.refinement.history import preview_candidate, proposal_for
from skillorchestra_core.refinement.proposing import propose_pending
from skillorchestra_core.refinement.records import Proposal
from skillorchestra_core.refinement.review import approve, reject
from skillorchestra_core.refinement.run import detect_and_store
from skillorchestra_core.refinement.store import STATUSES, list_candidates
from skillorchestra_core.settings import get_settings

ensure_app_shell()
sel, who = review_page_header("Review queue")


@st.cache_data(show_spinner="Computing the diff this decision would cause...", max_entries=64)
def _preview(db_url: str, cid: int, row_version: int, edits_json: str | None):
    edits = Proposal.model_validate_json(edits_json) if edits_json else None
    with open_session() as s:
        return preview_candidate(s, cid, edits)


c1, c2, c3 = st.columns([1, 1, 2])
c1.button("Run detection", key="rev:detect", on_click=run_action,
          args=(lambda s: f"{len(detect_and_store(s, sel.handbook, actor=who or 'system'))} candidate(s) found",))
c2.button("Propose (offline)", key="rev:propose", on_click=run_action,
          args=(lambda s: f"{propose_pending(s, sel.handbook)} proposal(s) ready",))
status = c3.selectbox("Status", ["(all)", *STATUSES], index=1, key="rev:status")
with open_session() as s:
    cands = list_candidates(s, sel.handbook, None if status == "(all)" else status)
    s.commit()  # keep carry-forward / supersession
if not cands:
    st.info(md(f"No {'' if status == '(all)' else status + ' '}candidate for {sel.handbook}. Run detection."))
    st.stop()
table(views.candidate_rows(cands), key="rev:table")

ids = [c.id for c in cands]
pos = st.session_state.get("rev:pos", 0) % len(ids)
n1, n2, n3 = st.columns([1, 1, 4])
if n1.button("Previous", shortcut="K", key="rev:prev"):
    pos = (pos - 1) % len(ids)
if n2.button("Next", shortcut="J", key="rev:next"):
    pos = (pos + 1) % len(ids)
st.session_state["rev:pos"] = pos
cand = cands[pos]
st.subheader(md(f"#{cand.id} {cand.record.title}"))  # skill keys and notes are data: shown literally
st.caption(md(f"{cand.status} · computed on v{cand.version} by the {cand.detector} detector · statistic "
              f"{cand.statistic:.2f} (threshold {cand.record.threshold:.2f})"
              + (f" · {cand.record.note}" if cand.record.note else "")))
if cand.decided_by:
    st.text(f"Decided by {cand.decided_by} at {cand.decided_at:%Y-%m-%d %H:%M} UTC: {cand.decision_note}")

st.markdown("**Evidence** (train split; posterior mean and 95% interval per group under Beta(1, 1))")
table(views.evidence_rows(cand.record), key=f"rev:evidence:{cand.id}")
table(views.example_rows(cand.record), key=f"rev:examples:{cand.id}")

st.markdown("**Proposal**")
if cand.proposal is None:
    st.text("Failed: " + cand.proposal_error if cand.proposal_status == "failed" else
            "No stored proposal: approving applies the offline proposal.")
else:
    st.text(f"{cand.proposal.source}: {cand.proposal.rationale}")
    table(views.proposal_rows(cand.proposal), key=f"rev:proposal:{cand.id}")

if cand.status != "pending":
    st.stop()
with open_session() as s:
    base = proposal_for(s, cand.id)  # the edit form starts from what approving would apply
with st.expander("Edit the proposal (names, descriptions, indicators, child assignment)"):
    edited = []
    for i, p in enumerate(base.skills):
        k = f"rev:edit:{cand.id}:{cand.row_version}:{i}"
        cols = st.columns(4)
        edited.append({"key": cols[0].text_input("Key", p.key, key=k + ":key"),
                       "name": cols[1].text_input("Name", p.name, key=k + ":name"),
                       "description": cols[2].text_input("Description", p.description, key=k + ":desc"),
                       "indicators": cols[3].text_input("Indicators", ", ".join(p.indicators), key=k + ":ind")})
    moves = {}
    if cand.kind == "split":
        st.caption("Move evidence queries: one `query id = child key` per line.")
        for line in st.text_area("Moves", "", key=f"rev:moves:{cand.id}:{cand.row_version}").splitlines():
            q, _, child = line.partition("=")
            if q.strip().isdigit() and child.strip():
                moves[int(q.strip())] = child.strip()
try:
    edits = views.edited_proposal(base, edited, moves)
    edits_json = edits.model_dump_json() if edits.skills != base.skills or moves else None
except Exception as exc:  # shown, never applied
    st.error(md(f"These edits are not valid: {exc}"))
    edits_json = None

diff = _preview(get_settings().database_url, cand.id, cand.row_version, edits_json)
st.markdown(f"**What approving changes** ({md(diff.before)} → {md(diff.after)}, lambda {diff.lam})")
summary_cols = st.columns(5)
for col, (label, value) in zip(summary_cols, views.diff_summary(diff).items()):
    col.metric(label, value)
table(views.diff_skill_rows(diff), key=f"rev:diff:{cand.id}")
if diff.routing:
    st.caption(f"Routing choices that change on {len(diff.routing)} of {diff.val_queries} validation queries:")
    table(diff.routing, key=f"rev:routing:{cand.id}")

a1, a2, a3, a4 = st.columns([1, 1, 2, 1])
a1.button("Approve", shortcut="A", key="rev:approve", type="primary", on_click=run_action,
          args=(approve, cand.id, who), kwargs={"seen_row_version": cand.row_version})
a2.button("Approve with edits", shortcut="E", key="rev:approve_edits", on_click=run_action,
          args=(approve, cand.id, who), disabled=edits_json is None,
          kwargs={"seen_row_version": cand.row_version,
                  "edits": Proposal.model_validate_json(edits_json) if edits_json else None})
reason = a3.text_input("Reason to reject", key=f"rev:reason:{cand.id}", label_visibility="collapsed",
                       placeholder="Reason to reject")
a4.button("Reject", shortcut="X", key="rev:reject", on_click=run_action, args=(reject, cand.id, who, reason),
          kwargs={"seen_row_version": cand.row_version})
