"""Exports are ordinary files: mode 0666 minus the umask (0644 under the usual 022), not mkstemp's 0600."""

import os
import stat

import pytest

from skillorchestra_core.formats.export import write_json


@pytest.mark.parametrize("umask, mode", [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_export_mode_follows_the_umask(tmp_path, umask, mode):
    old = os.umask(umask)
    try:
        write_json({"a": 1}, tmp_path / "out.json")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "out.json").stat().st_mode) == mode
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
