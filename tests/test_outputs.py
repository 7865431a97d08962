"""checked_output: an output path that can't be written is a user error before any work;
write_atomic: a failed write leaves the old file (or none), never half a new one."""

from __future__ import annotations

import errno
import os
import signal
import stat
import subprocess
import sys
import threading
from pathlib import Path

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


@pytest.mark.parametrize("unnamed", [True, False])
def test_a_folder_that_cant_be_written_is_refused_by_trying(tmp_path, monkeypatch, unnamed):
    """os.access says yes to root on read-only mounts and /proc; the check makes a file (one
    without a name where the file system allows: nothing to leave behind)."""
    def no_space(*args, **kwargs):
        raise OSError(28, "No space left on device")

    if unnamed:
        monkeypatch.setattr("dfl_dsl.outputs.os.open", no_space)
    else:
        monkeypatch.setattr("dfl_dsl.outputs._unnamed", lambda folder: None)
        monkeypatch.setattr("dfl_dsl.outputs.tempfile.mkstemp", no_space)
    with pytest.raises(DflError, match="can't write in the folder .*No space left"):
        checked_output(tmp_path / "sol.json", "--output")


def test_a_read_only_file_is_refused_and_kept(tmp_path, monkeypatch):
    """`--output sol.json` over a file its owner made read-only (chmod 444) was replaced: the
    atomic rename needs only the folder to be writable. Refused, as the shell's `>` refuses
    it. (Root may write anything; os.access is made to answer as for the file's owner.)"""
    path = tmp_path / "sol.json"
    path.write_text("precious")
    path.chmod(0o444)
    if os.geteuid() == 0:
        monkeypatch.setattr("dfl_dsl.outputs.os.access",
                            lambda p, mode: bool(os.stat(p).st_mode & stat.S_IWUSR))
    with pytest.raises(DflError, match="sol.json: the file is read-only"):
        checked_output(path, "--output")
    assert path.read_text() == "precious"
    path.chmod(0o644)
    assert checked_output(path, "--output") == path


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


# ---------------------------------------------------------------------- hardening (#19)
def test_a_device_is_written_through_not_replaced():
    # as root, --output /dev/null replaced the device node with a regular file
    checked_output("/dev/null", "--output")  # no probe file in /dev
    write_atomic(Path("/dev/null"), lambda handle: handle.write(b"gone"))
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


def test_a_full_device_is_a_user_error():
    with pytest.raises(DflError, match="can't write `/dev/full`: No space left on device"):
        write_atomic(Path("/dev/full"), lambda handle: handle.write(b"x" * 100_000))


def test_a_fifo_is_written_through(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    write_atomic(fifo, lambda handle: handle.write(b"through"))
    reader.join(timeout=10)
    assert got == [b"through"] and stat.S_ISFIFO(os.stat(fifo).st_mode)


def test_a_link_to_a_file_stays_a_link(tmp_path):
    (tmp_path / "real.json").write_bytes(b"old")
    link = tmp_path / "link.json"
    link.symlink_to("real.json")
    write_atomic(link, lambda handle: handle.write(b"new"))
    assert link.is_symlink() and (tmp_path / "real.json").read_bytes() == b"new"


@pytest.mark.parametrize("unnamed", [True, False])
def test_a_full_disk_is_a_user_error_and_keeps_the_old_file(tmp_path, monkeypatch, unnamed):
    if not unnamed:  # a file system without O_TMPFILE: a named temp file, removed too
        monkeypatch.setattr("dfl_dsl.outputs._unnamed", lambda folder: None)
    path = tmp_path / "out.npz"
    path.write_bytes(b"old")

    def fills_the_disk(handle):
        handle.write(b"half")
        raise OSError(errno.ENOSPC, "No space left on device")

    with pytest.raises(DflError, match="can't write .*out.npz`: No space left on device"):
        write_atomic(path, fills_the_disk)
    assert path.read_bytes() == b"old" and sorted(os.listdir(tmp_path)) == ["out.npz"]


KILLED_WRITER = """
import sys, time
from pathlib import Path
from dfl_dsl.outputs import write_atomic
def slow(handle):
    handle.write(b"partial" * 1000)
    handle.flush()
    print("writing", flush=True)
    time.sleep(60)
write_atomic(Path(sys.argv[1]), slow)
"""


@pytest.mark.parametrize("unnamed", [True, False])
def test_kill_9_mid_write_leaves_no_temp_file_for_long(tmp_path, unnamed):
    """The temp file has no name (O_TMPFILE): nothing is left. Without O_TMPFILE, it is named
    after its process, and the next write to the same target removes it."""
    path = tmp_path / "sol.json"
    path.write_bytes(b"old")
    code = KILLED_WRITER if unnamed else KILLED_WRITER.replace(
        "from dfl_dsl.outputs import write_atomic",
        "import dfl_dsl.outputs as o; o._unnamed = lambda folder: None; write_atomic = "
        "o.write_atomic")
    writer = subprocess.Popen([sys.executable, "-c", code, str(path)], stdout=subprocess.PIPE)
    assert writer.stdout.readline() == b"writing\n"
    writer.send_signal(signal.SIGKILL)
    writer.wait()
    left = sorted(os.listdir(tmp_path))
    assert path.read_bytes() == b"old"
    assert left == ["sol.json"] if unnamed else len(left) == 2
    write_atomic(path, lambda handle: handle.write(b"new"))
    assert sorted(os.listdir(tmp_path)) == ["sol.json"] and path.read_bytes() == b"new"


def test_a_live_writers_temp_file_is_left_alone(tmp_path):
    path = tmp_path / "sol.json"
    mine = tmp_path / f".sol.json.dfl-tmp.{os.getpid()}.abc"
    mine.write_bytes(b"in progress")
    write_atomic(path, lambda handle: handle.write(b"new"))
    assert mine.exists()


def test_outputs_to_the_same_device_are_not_an_overwrite():
    refuse_overwriting({"--output": "/dev/null", "--write": "/dev/null"}, {"--data": "/dev/null"})
