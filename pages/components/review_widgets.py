"""Review pages' shared pieces: who is acting (OIDC login or the typed name), flash messages, decision callbacks."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from pages.components.context import current_selection, open_session
from pages.components.trace_view import md
from skillorchestra_core.errors import Conflict, StudioError


def oidc_configured() -> bool:
    try:
        return "auth" in st.secrets
    except Exception:  # no secrets.toml at all
        return False


def acting_identity() -> str:
    """The signed-in user's email (OIDC) or, in local mode, the reviewer name typed in the sidebar ('' if none)."""
    if oidc_configured():
        if not st.user.get("is_logged_in", False):
            st.sidebar.button("Log in", on_click=st.login, key="rev:login")
            return ""
        return str(st.user.get("email") or st.user.get("name") or "")
    return str(st.session_state.get("ctx:reviewer") or "").strip()


def identity_caption(who: str) -> None:
    if oidc_configured():
        st.caption(md(f"Signed in as {who}.") if who else "Log in (sidebar) to decide.")
    else:
        st.caption(md(f"Local mode: decisions are recorded as {who!r} (the reviewer name in the sidebar).") if who
                   else "Local mode: type your reviewer name in the sidebar to decide.")


def flash(kind: str, text: str) -> None:
    st.session_state["rev:flash"] = (kind, text)


def show_flash() -> None:
    kind, text = st.session_state.pop("rev:flash", (None, None))
    if kind:
        getattr(st, kind)(md(text))  # messages carry skill keys and names: data, shown literally


def run_action(action, *args, **kwargs) -> None:
    """Callback body: run one core action in its own session; outcome becomes the flash message."""
    with open_session() as s:
        try:
            result = action(s, *args, **kwargs)
            flash("success", getattr(result, "message", None) or str(result))
        except Conflict as exc:
            flash("warning", str(exc))
        except StudioError as exc:
            flash("error", str(exc))


def table(rows: list[dict], key: str | None = None) -> None:
    """Rows as a dataframe: data and LLM text shown as text, never as Markdown."""
    if rows:
        st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch", key=key)
    else:
        st.caption("(none)")


def review_page_header(title: str):
    """Title, the picked handbook (stops with a hint when there is none), the acting reviewer and any flash
    message: the head of every review page. Returns (selection, reviewer)."""
    st.title(title)
    sel = current_selection()
    if not sel.handbook:
        st.info("No handbook yet. Run `skillorchestra demo` or import outcomes.")
        st.stop()
    who = acting_identity()
    identity_caption(who)
    show_flash()
    return sel, who
