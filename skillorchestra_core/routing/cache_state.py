"""The derived routing state (skill retrievers, the mode-path index: whatever `RoutingModel.cached` holds) in the
compiled model's cache file, so a new process does not rebuild its TF-IDF matrices either.

Objects are stored as data only: their attributes as JSON, numpy arrays and sparse matrices as arrays; on load an
object is re-created from the attributes of a class of the routing package (no pickle, nothing executed). The
entries carry a digest of the source of the modules that define them: after any change to that code they are
simply rebuilt on first use. An entry that cannot be stored is left out.
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib
import importlib.util
from pathlib import Path
from typing import Any, Callable

import numpy as np

from skillorchestra_core.routing.model import RoutingModel

_PACKAGE = "skillorchestra_core.routing."


def _warm_retrievers(model: RoutingModel) -> None:
    from skillorchestra_core.routing import activation

    for mode in model.modes:
        activation.retriever(model, mode)


def _warm_paths(model: RoutingModel) -> None:
    from skillorchestra_core.routing import modes

    if len(model.modes) > 1 and model.paths is not None:
        modes._path_index(model)


# Each builds some derived state into `model._cache` before the model is stored (a failing one is skipped).
WARMERS: list[Callable[[RoutingModel], None]] = [_warm_retrievers, _warm_paths]


def warm(model: RoutingModel) -> None:
    for warmer in WARMERS:
        try:
            warmer(model)
        except Exception:  # noqa: BLE001  (derived state is an optimisation; routing builds it on demand)
            continue


def encode(model: RoutingModel, arrays: dict[str, np.ndarray]) -> list:
    """[[key, state, source digest], ...] for every entry of the model's derived-state cache that can be stored."""
    out = []
    for n, (key, value) in enumerate(getattr(model, "_cache", {}).items()):
        entry: dict[str, np.ndarray] = {}
        try:
            state = _state(value, entry, f"x{n}")
            digest = _digest(value)
        except (TypeError, ValueError):
            continue
        arrays.update(entry)
        out.append([_state(key, {}, ""), state, digest])
    return out


def decode(entries: list, z, model: RoutingModel) -> None:
    """Put the stored entries whose code is unchanged back into the model's cache."""
    for key, state, digest in entries:
        try:
            value = _value(state, z)
            if _digest(value) != digest:
                continue
        except Exception:  # noqa: BLE001  (stale or foreign: rebuilt on demand)
            continue
        model._cache[_value(key, z)] = value


def _state(obj: Any, arrays: dict[str, np.ndarray], at: str) -> Any:
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return obj
    if isinstance(obj, np.ndarray):
        if obj.dtype == object:
            raise TypeError("object arrays are not stored")
        arrays[at] = obj
        return {"$a": at}
    if _is_sparse(obj):
        m = obj.tocsr()
        arrays.update({f"{at}.data": m.data, f"{at}.indices": m.indices, f"{at}.indptr": m.indptr})
        return {"$csr": at, "shape": list(m.shape), "kind": "csr_array" if "array" in type(obj).__name__ else "csr"}
    if isinstance(obj, list) and all(x is None or isinstance(x, (bool, int, float, str)) for x in obj):
        return {"$l": obj}  # plain values: read back as they are, with no per-item work
    if isinstance(obj, dict) and all(isinstance(k, str) for k in obj) and all(
            v is None or isinstance(v, (bool, int, float, str)) for v in obj.values()):
        return {"$m": obj}
    if isinstance(obj, (list, tuple)):
        items = [_state(x, arrays, f"{at}.{i}") for i, x in enumerate(obj)]
        return items if isinstance(obj, list) else {"$t": items}
    if isinstance(obj, dict):
        return {"$d": [[_state(k, arrays, f"{at}.k{i}"), _state(v, arrays, f"{at}.v{i}")]
                       for i, (k, v) in enumerate(obj.items())]}
    cls = type(obj)
    if cls.__module__.startswith(_PACKAGE) and hasattr(obj, "__dict__"):
        if isinstance(obj, RoutingModel):
            raise TypeError("the model itself is stored elsewhere")
        # Private attributes are memos derived from the public ones (a lookup table, a mask): rebuilt on first use,
        # never stored (one would copy a whole vocabulary into the file).
        public = {k: v for k, v in vars(obj).items() if not k.startswith("_")}
        return {"$o": f"{cls.__module__}:{cls.__qualname__}", "state": _state(public, arrays, f"{at}.o")}
    raise TypeError(f"cannot store {cls.__name__}")


def _value(state: Any, z) -> Any:
    if not isinstance(state, (list, dict)):
        return state
    if isinstance(state, list):
        return [_value(x, z) for x in state]
    if "$l" in state:
        return state["$l"]
    if "$m" in state:
        return state["$m"]
    if "$a" in state:
        return z[state["$a"]]
    if "$csr" in state:
        from scipy import sparse

        at = state["$csr"]
        make = sparse.csr_array if state.get("kind") == "csr_array" else sparse.csr_matrix
        return make((z[f"{at}.data"], z[f"{at}.indices"], z[f"{at}.indptr"]), shape=tuple(state["shape"]))
    if "$t" in state:
        return tuple(_value(x, z) for x in state["$t"])
    if "$d" in state:
        return {_value(k, z): _value(v, z) for k, v in state["$d"]}
    module, _, name = state["$o"].partition(":")
    if not module.startswith(_PACKAGE):
        raise ValueError("only classes of the routing package are re-created")
    cls = getattr(importlib.import_module(module), name)
    obj = cls.__new__(cls)
    values = _value(state["state"], z)
    if dataclasses.is_dataclass(cls) and getattr(cls, "__dataclass_params__").frozen:
        for k, v in values.items():
            object.__setattr__(obj, k, v)
    else:
        obj.__dict__.update(values)
    return obj


def _is_sparse(obj: Any) -> bool:
    return type(obj).__module__.startswith("scipy.sparse")


def _digest(value: Any) -> str:
    """Digest of the source files of the routing classes inside `value`."""
    modules: set[str] = set()
    _modules(value, modules)
    h = hashlib.sha256()
    for module in sorted(modules):
        spec = importlib.util.find_spec(module)
        h.update(module.encode())
        if spec is not None and spec.origin:
            h.update(Path(spec.origin).read_bytes())
    return h.hexdigest()[:16]


def _modules(value: Any, out: set[str]) -> None:
    if isinstance(value, (list, tuple)):
        for x in value:
            _modules(x, out)
    elif isinstance(value, dict):
        for x in value.values():
            _modules(x, out)
    elif type(value).__module__.startswith(_PACKAGE):
        out.add(type(value).__module__)
        for x in vars(value).values():
            _modules(x, out)
