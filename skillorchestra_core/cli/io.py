"""`import` and `export` commands (owned by the formats work)."""


def register(app) -> None:
    return None
