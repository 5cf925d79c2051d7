"""Playground inputs. Each widget's value lives in the URL (bind="query-params": a result is a shareable link) and
survives page switches (persist_state="session"). URL names: q, router, lam, cost, exec, compare, router2, v2."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import streamlit as st

from skillorchestra_core.routing.compare import Run, compare_runs
from skillorchestra_core.routing.utility import COST_UNIT_HELP

KEEP: dict[str, Any] = {"bind": "query-params", "persist_state": "session"}
BOUND = ("q", "router", "lam", "cost", "exec", "compare", "router2", "v2")  # the URL names of the inputs above
_LAST = "pg:inputs"  # the inputs as the last Playground run left them
_RESTORED = "pg:restored"
# Bound widgets put their shown option in the URL, so the options are the short words themselves.
COMPARE = {"nothing": "none", "another router": "router", "another version": "version"}


@dataclass(frozen=True)
class Request:
    handbook: str
    version: int
    query: str
    router: str
    cost_unit: str
    execute: str
    runs: tuple[Run, ...]

    def key(self) -> tuple:
        return (self.handbook, self.version, self.query.strip(), self.cost_unit, self.execute, self.runs)


def restore_inputs() -> None:
    """Before the inputs are drawn: a Playground URL that lost every input parameter while this session still has
    them gets the inputs back, and with them the URL to share. Streamlit 1.67 lets the URL win on history navigation
    (a missing parameter resets its widget), and the browser's Back from a page link lands on an intermediate entry
    that holds the other page's parameters; so the values are set and the page reruns once, as a plain rerun (a
    sidebar switch to the Playground takes that one rerun too: no public API tells the two apart)."""
    last = st.session_state.get(_LAST)
    if st.session_state.pop(_RESTORED, False) or not last or any(name in st.query_params for name in BOUND):
        return
    for name, value in last.items():
        st.session_state[name] = value
    st.session_state[_RESTORED] = True  # once: the rerun must not restore again
    st.rerun()


def remember_inputs() -> None:
    """After the inputs are drawn: the values the URL holds (those off their defaults), for `restore_inputs`."""
    st.session_state[_LAST] = {name: st.session_state[name] for name in BOUND if name in st.query_params}


def _use_example() -> None:
    pick = st.session_state.get("pg:example")
    if pick:
        st.session_state["q"] = pick


def query_input(examples: list[str], big: bool) -> str:
    if not big:
        st.selectbox("Pick a question from the evidence (optional)", [""] + examples, key="pg:example",
                     on_change=_use_example, format_func=lambda q: q[:140] if q else "(type your own below)")
    return st.text_area("Query", key="q", height=80, placeholder="e.g. Which river is longer, ...?", **KEEP)


def lambda_slider() -> float:
    return st.slider("Lambda (cost weight)", 0.0, 2.0, value=0.1, step=0.005, key="lam", **KEEP,
                     help="Moving it after routing shows the choice at the new lambda without routing again.")


def _router_help(routers: dict[str, str]) -> str:
    return "\n".join(f"- `{name}`: {label}" for name, label in routers.items())


def settings_inputs(routers: dict[str, str], versions: list[int], current: int, executions: tuple[str, ...]):
    """Router, execution, cost unit and what to compare with; returns (router, execute, cost_unit, runs)."""
    c1, c2, c3 = st.columns([2, 2, 2])
    router = c1.selectbox("Router", list(routers), key="router", help=_router_help(routers), **KEEP)
    execute = c2.radio("Execution", executions, key="exec", horizontal=True, **KEEP)
    cost_unit = c3.radio("Cost unit", ["normalised", "max", "usd"], key="cost", horizontal=True,
                         help=COST_UNIT_HELP, **KEEP)
    others = [v for v in versions if v != current]
    modes = list(COMPARE)[:2] + ([list(COMPARE)[2]] if others else [])
    c4, c5, c6 = st.columns([2, 2, 2])
    compare = COMPARE[c4.radio("Compare with", modes, key="compare", horizontal=True, **KEEP)]
    router2 = version2 = None
    if compare == "router":
        options = [r for r in routers if r != router]
        router2 = c5.selectbox("Second router", options, key="router2", **KEEP)
    elif compare == "version":
        version2 = c5.selectbox("Second version", others, key="v2", format_func=lambda v: f"v{v}", **KEEP)
    if not others:
        c5.caption(f"Only one version (v{current}) of this handbook: nothing to compare versions with.")
    c6.toggle("Pause between steps", value=True, key="pg:animate", persist_state="session")
    return router, execute, cost_unit, tuple(compare_runs(router, current, compare, router2, version2))
