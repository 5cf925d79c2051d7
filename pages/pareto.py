"""Pareto: accuracy vs cost of the validation runs of a handbook, the frontier, baselines, selection and publishing."""

import numpy as np
import streamlit as st

from pages.components.context import current_selection, open_session
from pages.components.shell import ensure_app_shell
from skillorchestra_core.display_text import md_line
from skillorchestra_core.selection.figures import pareto_figure, run_of_point
from skillorchestra_core.selection.publish import publish, published
from skillorchestra_core.selection.service import select as run_select
from skillorchestra_core.selection.sweep import SweepOptions
from skillorchestra_core.selection.view import breakdown, facets, live_runs_table, load_view

ensure_app_shell()
st.title("Pareto")
st.caption("Validation runs (replay: each choice scored with the chosen agent's recorded outcome) of every "
           "candidate version, router and lambda, with the baselines on the same axes.")
handbook, _ = current_selection()
if handbook is None:
    st.info("No handbook yet. Run `skillorchestra demo` or import outcomes.")
    st.stop()


def _sweep(name: str) -> None:
    with open_session() as s:
        run_select(s, name, SweepOptions(lambdas=tuple(i / 20 for i in range(21))), actor=_actor())
        s.commit()


def _actor() -> str:
    return st.session_state.get("ctx:reviewer") or "reviewer"


def _publish(name: str, version: int, lam: float, router: str, run_id: int) -> None:
    with open_session() as s:
        pub = publish(s, name, version, lam, router=router, run_id=run_id, actor=_actor(), note="Pareto page")
        s.commit()
    st.session_state["pareto:published"] = (f"Published {md_line(name)} v{pub.version}, router {md_line(pub.router)}, "
                                            f"λ={pub.lam:g}.")


with open_session() as s:
    found = facets(s, handbook)
    current = published(s, handbook)
if current is not None:
    st.caption(f"Published: v{current.version}, router {md_line(current.router)}, λ={current.lam:g} "
               f"(by {md_line(current.actor)}, {current.published_at:%Y-%m-%d %H:%M}).")
if not found["split"]:
    st.info("No validation run for this handbook yet.")
    if st.button("Run the replay sweep (candidates × 21 lambdas on val)", key="pareto:sweep"):
        with st.spinner("Building the candidate versions and replaying every query of val…"):
            _sweep(handbook)
        st.rerun()
    st.stop()

c1, c2, c3 = st.columns(3)
split = c1.selectbox("Split", found["split"], index=found["split"].index("val") if "val" in found["split"] else 0,
                     key=f"pareto:split:{handbook}")
routers = c2.multiselect("Router", found["router"], default=found["router"], key=f"pareto:routers:{handbook}")
cands = c3.multiselect("Candidate", found["candidate"], default=found["candidate"], key=f"pareto:cands:{handbook}")
lam = st.slider("Objective λ: select the run maximising accuracy − λ × cost / best-single's cost", 0.0, 1.0, 0.1,
                step=0.01, key="pareto:lambda")
with open_session() as s:
    view = load_view(s, handbook, split, routers=routers, candidates=cands, objective_lambda=lam,
                     rng=np.random.default_rng(0))
st.plotly_chart(pareto_figure(view), on_select="rerun", selection_mode="points", key="pareto:chart", width="stretch")
points = ((st.session_state.get("pareto:chart") or {}).get("selection") or {}).get("points") or []
clicked = run_of_point(view, points[0]) if points else None
chosen = view.runs[view.selected] if view.selected is not None else None
if chosen is not None:
    where = "at" if split == "val" else "on val at"  # a held-out split shows val's choice, never its own
    cost = "no cost" if chosen.mean_cost_usd is None else f"{chosen.mean_cost_usd * 1e6:.1f} µ$/query"
    st.markdown(f"**Selected {where} λ={lam:g}:** {md_line(chosen.label)} · accuracy {chosen.accuracy:.3f} · {cost}")
target = clicked if clicked is not None and not clicked.baseline else chosen
if st.session_state.get("pareto:published"):
    st.success(st.session_state["pareto:published"])
if target is not None:
    st.button(f"Publish v{target.version} {md_line(target.candidate)} λ={target.lam:g}", type="primary",
              key="pareto:publish", on_click=_publish,
              args=(handbook, target.version, target.lam, target.router, target.id))
if clicked is not None and clicked.id is not None:
    st.subheader(md_line(clicked.label))
    with open_session() as s:
        per_agent, per_skill = breakdown(s, clicked.id)
    a, b = st.columns(2)
    a.dataframe(per_agent, hide_index=True, key="pareto:agents")
    b.dataframe(per_skill, hide_index=True, key="pareto:skills")

with open_session() as s:
    live_runs = live_runs_table(s, handbook)
if len(live_runs):
    st.subheader("Live runs")
    st.caption("A live run calls the routed agents for real. An interrupted run was stopped before it finished (its "
               "process is gone); finish it with `skillorchestra live HANDBOOK --resume ID`.")
    st.dataframe(live_runs, hide_index=True, key="pareto:live")
