"""AppTest helpers shared by the page tests."""

import pytest
from streamlit.testing.v1 import AppTest


@pytest.fixture
def open_page(app_path):
    """`open_page("pages/x.py", params={...}, state={...})`: run app.py (the sidebar picker the pages read) with
    these query params and session state, then switch to the page and run it."""

    def _open(page: str, params: dict | None = None, state: dict | None = None) -> AppTest:
        at = AppTest.from_file(app_path, default_timeout=60)
        for k, v in (params or {}).items():
            at.query_params[k] = v
        for k, v in (state or {}).items():
            at.session_state[k] = v
        at.run()
        return at.switch_page(page).run()

    return _open


@pytest.fixture
def open_at(open_page, request):
    """`open_at(handbook="demo-qa", node=None, **state)`: open the test module's PAGE at that handbook and node."""

    def _open(handbook: str = "demo-qa", node: str | None = None, **state) -> AppTest:
        params = {"handbook": handbook} | ({"node": node} if node else {})
        return open_page(request.module.PAGE, params, state)

    return _open
