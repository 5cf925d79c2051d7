"""Read the label/value "facts" the trace view draws (a caption, then the value's markdown) from an AppTest."""


def walk(node):
    """Every element under `node`, in drawing order."""
    children = getattr(node, "children", None)
    if children is None:
        yield node
        return
    for child in children.values():
        yield from walk(child)


def facts(at) -> list[tuple[str, str]]:
    out, label = [], None
    for el in walk(at.main):
        if el.type == "caption":
            label = el.value
        elif el.type == "markdown" and label is not None:
            out.append((label, el.value.lstrip("#* ").rstrip("*").replace("\\", "")))
            label = None
        else:
            label = None
    return out


def fact(at, label: str, nth: int = 0) -> str:
    return [v for lab, v in facts(at) if lab == label][nth]
