"""`route` command (owned by the routing work)."""


def register(app) -> None:
    return None
