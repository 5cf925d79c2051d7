"""The same core code on a real PostgreSQL server (started here on loopback when its binaries are present)."""

def test_demo_and_competence_match_sqlite_on_postgresql(pg_url, demo_db_url):
    from skillorchestra_core.db import session
    from skillorchestra_core.demo import build_demo
    from skillorchestra_core.handbook.delete import delete_handbook
    from skillorchestra_core.handbook.overview import show_record

    with session(pg_url) as s:
        build_demo(s)
        s.commit()
        on_pg = show_record(s, "demo-agents")
    with session(demo_db_url) as s:
        on_sqlite = show_record(s, "demo-agents")
    assert on_pg["content_hash"] == on_sqlite["content_hash"]
    assert on_pg["counts"] == on_sqlite["counts"]
    assert on_pg["competence"] == on_sqlite["competence"]
    with session(pg_url) as s:
        delete_handbook(s, "demo-agents")
        s.commit()
        assert [h["handbook"] for h in [show_record(s, "demo-qa")]] == ["demo-qa"]
