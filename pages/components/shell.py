"""Every page runs inside app.py's chrome (navigation, sidebar picker), even as the first request to a new server."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

import streamlit as st

# Set while app.py runs the picked page: the script thread of one session, so a ContextVar, not a global.
_INSIDE: ContextVar[bool] = ContextVar("inside_shell", default=False)


@contextmanager
def inside_shell() -> Iterator[None]:
    token = _INSIDE.set(True)
    try:
        yield
    finally:
        _INSIDE.reset(token)


def ensure_app_shell() -> None:
    """Run app.py's chrome, and this page inside it, when Streamlit ran the page file on its own.

    Streamlit keeps a legacy lookup for a folder named `pages/` beside the entry script: until app.py's
    st.navigation has run once in the server, the first request to a deep link (/graph?...) runs pages/graph.py
    alone. app.py's navigation ends that lookup for good and runs this page inside the chrome, keeping the URL and
    its query params.
    """
    if _INSIDE.get():
        return
    from app import main  # app.py imports this module: import it back only on this rare path

    main()
    st.stop()
