"""A shared link opened as the very first request to a freshly started server shows the page inside the app shell."""


def test_cold_deep_link_opens_the_page_with_sidebar_and_node(browser, launch_app, e2e_db_url, wait_for_app):
    base = launch_app(e2e_db_url)  # a new server: nothing has run app.py yet
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    pg = context.new_page()
    outside = []
    pg.on("request", lambda r: outside.append(r.url) if not r.url.startswith((base, "data:", "blob:", "about:"))
          else None)
    pg.goto(f"{base}/graph?handbook=demo-qa&version=1&node=skill:answer.math.word_problems")
    wait_for_app(pg)
    body = pg.locator('[data-testid="stMain"]').inner_text()
    sidebar = pg.locator('[data-testid="stSidebar"]').inner_text()
    context.close()
    assert "Graph" in body and "Word problems" in body  # the page, with the linked node's panel open
    assert "Page not found" not in body
    assert "Handbook" in sidebar and "Playground" in sidebar  # the picker and the navigation of app.py
    assert outside == []
