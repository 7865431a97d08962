"""Output files (`--output`, `--save`, `--out`, ...), for every command that writes one: the
path checked before any work, so a path that can't be written is a user error up front, not
an internal error after a long solve or training run with half the outputs written; and the
one way to write, which never leaves half a file and never destroys what is at the path.

A regular file (or a link to one) is replaced atomically: the new contents go to a file
without a name (Linux's O_TMPFILE) that is given one beside the target and renamed over it in
one step, so neither an interrupt nor kill -9 leaves a temp file behind. Where the folder's
file system has no O_TMPFILE, the temp file is named `.NAME.dfl-tmp.PID`, and the next write
to NAME removes those a dead process left. Anything else at the path — a device (/dev/null,
/dev/stdout), a FIFO, a socket — is written through, as a shell's `>` would, never replaced
by a regular file. A failed write (a full disk) is a user error naming the file.
"""

from __future__ import annotations

import errno
import glob
import os
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

from .errors import DflError

TEMP_MARK = ".dfl-tmp."


def checked_output(path: Path | str | None, option: str) -> Path | None:
    """`path` if a file can be written there (missing parent folders are made at write time),
    else a clear error naming `option`."""
    if path is None:
        return None
    path = Path(path)
    if path.is_dir():
        raise DflError(f"{option} {path} is a folder", hint="give a file path inside it")
    if _written_through(path):
        if not os.access(path, os.W_OK):
            raise DflError(f"{option} {path}: can't write to it (permission denied)")
        return path
    if path.is_file() and not os.access(path, os.W_OK):
        # the atomic rename would replace it all the same; a read-only file is one its owner
        # protected (the shell's `>` and `open(path, "w")` refuse it too)
        raise DflError(f"{option} {path}: the file is read-only (permission denied)",
                       hint="make it writable (chmod u+w), or write another file")
    folder = path.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    if not folder.is_dir():
        raise DflError(f"{option} {path}: `{folder}` is a file, not a folder")
    try:  # a real probe: os.access says yes to root on read-only mounts and on /proc
        fd = _unnamed(folder)  # (a file without a name: nothing to leave behind)
        if fd is None:
            fd, probe = tempfile.mkstemp(prefix=".dfl-probe.", dir=folder)
            os.unlink(probe)
    except OSError as exc:
        raise DflError(f"{option} {path}: can't write in the folder `{folder}` "
                       f"({exc.strerror or exc})") from None
    os.close(fd)
    return path


def refuse_overwriting(outputs: dict, inputs: dict) -> None:
    """Exit 2 before any work when an output would overwrite an input (`--save train.npz`
    destroyed the training file, `dfl solve --output data.json` the data) or another output
    (`--save x.png --plot x.png` lost the checkpoint). Both map option names to paths (None:
    not given)."""
    def where(path):
        return Path(path).resolve() if isinstance(path, str | Path) else None

    seen = {where(path): name for name, path in inputs.items() if where(path) is not None}
    for name, path in outputs.items():
        at = where(path)
        if at is None or _written_through(at):  # two outputs to /dev/null are fine
            continue
        if at in seen:
            raise DflError(f"{name} {path} would overwrite {seen[at]}",
                           hint="write it to another file")
        seen[at] = name


def write_atomic(path: Path, write: Callable[[BinaryIO], object]) -> None:
    """Let `write` fill the file at `path`: atomically for a regular file (the old file, or
    none, until the new one is whole), through for a device or FIFO. An OSError (a full disk,
    a read-only file system) is a DflError naming the file."""
    path = Path(path)
    try:
        if _written_through(path):
            with open(path, "wb") as handle:
                write(handle)
            return
        target = path.resolve()  # a link to a file keeps being a link: its target is replaced
        target.parent.mkdir(parents=True, exist_ok=True)
        _remove_stale_temps(target)
        _replace(target, write)
    except OSError as exc:
        raise DflError(f"can't write `{path}`: {exc.strerror or exc}") from None


def _written_through(path: Path) -> bool:
    """Whether something other than a regular file (or a link to one) is at `path`."""
    try:
        mode = os.stat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return False
    return not stat.S_ISREG(mode) and not stat.S_ISDIR(mode)


def _replace(target: Path, write: Callable[[BinaryIO], object]) -> None:
    """Write a new file and rename it over `target` in one step."""
    mode = _file_mode(target)
    fd = _unnamed(target.parent)
    named = fd is None
    if named:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}{TEMP_MARK}{os.getpid()}.",
                                   dir=target.parent)
    else:
        tmp = str(target.parent / f".{target.name}{TEMP_MARK}{os.getpid()}.link")
    try:
        with os.fdopen(fd, "wb") as handle:
            write(handle)
            handle.flush()
            os.fchmod(handle.fileno(), mode)
            if not named:  # the name exists only between this link and the rename below
                _link(handle.fileno(), Path(tmp))
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _unnamed(folder: Path) -> int | None:
    """A file without a name in `folder` (None where the system or file system has none)."""
    flag = getattr(os, "O_TMPFILE", None)
    if flag is None or not os.path.isdir("/proc/self/fd"):
        return None
    try:
        return os.open(folder, flag | os.O_WRONLY, 0o600)
    except OSError as exc:
        if exc.errno in (errno.EOPNOTSUPP, errno.EISDIR, errno.EINVAL, errno.ENOENT):
            return None
        raise


def _link(fd: int, name: Path) -> None:
    """Give the unnamed file `fd` the name `name`: linkat(AT_SYMLINK_FOLLOW) on its /proc
    entry (os.link calls plain link(), which links the /proc symlink itself, unless a
    folder descriptor is given)."""
    folder = os.open(name.parent, os.O_RDONLY)
    try:
        os.link(f"/proc/self/fd/{fd}", name.name, dst_dir_fd=folder, follow_symlinks=True)
    finally:
        os.close(folder)


def _remove_stale_temps(target: Path) -> None:
    """Temp files of earlier writes to `target` whose process is gone (killed mid-write)."""
    for stale in target.parent.glob(glob.escape(f".{target.name}{TEMP_MARK}") + "*"):
        pid = stale.name[len(target.name) + 1 + len(TEMP_MARK):].split(".")[0]
        if pid.isdigit() and not _alive(int(pid)):
            stale.unlink(missing_ok=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process
        return True
    return True


def _file_mode(path: Path) -> int:
    """The mode a plain `open(path, "w")` would leave: the old file's when it is replaced,
    else 0o666 less the umask (a temp file is 0o600, private to its owner)."""
    try:
        return path.stat().st_mode & 0o777
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask
