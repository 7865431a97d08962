"""checked_output: an output path that can't be written is a user error before any work;
write_atomic: a failed write leaves the old file (or none), never half a new one."""

from __future__ import annotations

import pytest

from dfl_dsl.errors import DflError
from dfl_dsl.outputs import checked_output, write_atomic


def test_a_file_path_passes_and_missing_folders_are_fine(tmp_path):
    assert checked_output(None, "--save") is None
    assert checked_output(tmp_path / "a.json", "--output") == tmp_path / "a.json"
    assert checked_output(tmp_path / "new" / "deeper" / "a.json", "--output") is not None


def test_a_folder_is_refused(tmp_path):
    with pytest.raises(DflError, match="--save .* is a folder"):
        checked_output(tmp_path, "--save")


def test_a_file_in_the_way_of_the_folders_is_refused(tmp_path):
    (tmp_path / "afile").write_text("")
    with pytest.raises(DflError, match="`.*afile` is a file, not a folder"):
        checked_output(tmp_path / "afile" / "sub" / "x.npz", "--out")


def test_write_atomic_writes_or_leaves_the_old_file(tmp_path):
    path = tmp_path / "new" / "out.json"
    write_atomic(path, lambda handle: handle.write(b"first"))
    assert path.read_bytes() == b"first"

    def fails(handle):
        handle.write(b"half")
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        write_atomic(path, fails)
    assert path.read_bytes() == b"first"
    assert sorted(p.name for p in path.parent.iterdir()) == ["out.json"]  # no temp file left
