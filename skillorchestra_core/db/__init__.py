"""Database access: the engine factory, tables, migrations and repository functions."""

from skillorchestra_core.db.engine import dispose_engines, get_engine, session

__all__ = ["dispose_engines", "get_engine", "session"]
