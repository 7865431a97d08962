"""checked_output: an output path that can't be written is a user error before any work;
write_atomic: a failed write leaves the old file (or none), never half a new one."""

from __future__ import annotations

import os

import pytest

from dfl_dsl.errors import DflError
from dfl_dsl.outputs import checked_output, refuse_overwriting, write_atomic


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


def test_a_folder_that_cant_be_written_is_refused_by_trying(tmp_path, monkeypatch):
    """os.access says yes to root on read-only mounts and /proc; the check makes a file."""
    def no_space(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("dfl_dsl.outputs.tempfile.mkstemp", no_space)
    with pytest.raises(DflError, match="can't write in the folder .*No space left"):
        checked_output(tmp_path / "sol.json", "--output")


def test_the_probe_leaves_nothing_behind(tmp_path):
    checked_output(tmp_path / "sol.json", "--output")
    assert list(tmp_path.iterdir()) == []


def test_an_output_over_an_input_or_another_output_is_refused(tmp_path):
    data = tmp_path / "d.json"
    with pytest.raises(DflError, match="--output .* would overwrite --data"):
        refuse_overwriting({"--output": tmp_path / "x" / ".." / "d.json"}, {"--data": data})
    with pytest.raises(DflError, match="--plot .* would overwrite --save"):
        refuse_overwriting({"--save": tmp_path / "a.png", "--plot": str(tmp_path / "a.png")},
                           {})
    refuse_overwriting({"--output": tmp_path / "s.json", "--write": None}, {"--data": data})


def test_write_atomic_gives_new_files_the_umask_mode_and_keeps_an_old_files(tmp_path):
    old = os.umask(0o022)
    try:
        path = tmp_path / "new.json"
        write_atomic(path, lambda handle: handle.write(b"x"))
        assert path.stat().st_mode & 0o777 == 0o644  # not mkstemp's 0o600
        path.chmod(0o640)
        write_atomic(path, lambda handle: handle.write(b"y"))
        assert path.stat().st_mode & 0o777 == 0o640
    finally:
        os.umask(old)
