"""Export one handbook version in a named format to a file."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from sqlmodel import Session

from skillorchestra_core.db.models import HandbookVersion
from skillorchestra_core.errors import StudioError
from skillorchestra_core.formats.canonical import export_canonical
from skillorchestra_core.formats.rsl import export_rsl
from skillorchestra_core.formats.snapshot import collect
from skillorchestra_core.formats.stage_router import export_stage_router
from skillorchestra_core.formats.version_json import export_version_json
from skillorchestra_core.processes import remove_orphans, temp_file

FORMATS = ("skillorchestra", "rsl", "stage-router", "json")


def export_document(s: Session, name: str, fmt: str, number: int | None = None) -> tuple[dict[str, Any], int]:
    """The exported document and the version number it came from."""
    if fmt not in FORMATS:
        raise StudioError(f"unknown export format {fmt!r}; use one of {', '.join(FORMATS)}")
    snap = collect(s, name, number)
    if fmt == "skillorchestra":
        doc = export_canonical(snap)
    elif fmt == "rsl":
        doc = export_rsl(snap)
    elif fmt == "stage-router":
        doc = export_stage_router(snap)
    else:
        parent = s.get(HandbookVersion, snap.row.parent_id) if snap.row.parent_id else None
        doc = export_version_json(snap, parent)
    return doc, snap.loaded.number


def _umask() -> int:
    mask = os.umask(0o022)  # reading the umask means setting it: put it straight back
    os.umask(mask)
    return mask


def write_json(doc: dict[str, Any], path: str | Path) -> None:
    """Write atomically (temp file + rename) so a failed export never leaves half a file behind; the temp file
    of an earlier export of the same file that was killed mid-write is removed first."""
    path = Path(path)
    if path.parent and not path.parent.exists():
        raise StudioError(f"{path}: folder {path.parent} does not exist")
    if not path.parent.is_dir():
        raise StudioError(f"{path}: {path.parent} is not a folder")
    if path.is_dir():
        raise StudioError(f"{path}: is a folder; give a file name to write")
    if path.exists() and not path.is_file():
        raise StudioError(f"{path}: is not a regular file; give a file name to write")
    try:
        remove_orphans(path.parent, f".{path.name}.")  # what an export of this file killed mid-write left
        fd, tmp = temp_file(path.parent, f".{path.name}.")
    except OSError as exc:
        raise StudioError(f"{path}: cannot write in {path.parent} ({exc.strerror or exc})") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(doc, fh, indent=2, ensure_ascii=False, allow_nan=False)
            fh.write("\n")
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; an export is an ordinary file
        os.replace(tmp, path)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise StudioError(f"{path}: cannot write ({exc.strerror or exc})") from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
