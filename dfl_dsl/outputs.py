"""Output files (`--output`, `--save`, `--out`, ...), for every command that writes one: the
path checked before any work, so a path that can't be written is a user error up front, not
an internal error after a long solve or training run with half the outputs written; and the
one atomic write, so an interrupted write never leaves half a file."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

from .errors import DflError


def checked_output(path: Path | str | None, option: str) -> Path | None:
    """`path` if a file can be written there (missing parent folders are made at write time),
    else a clear error naming `option`."""
    if path is None:
        return None
    path = Path(path)
    if path.is_dir():
        raise DflError(f"{option} {path} is a folder", hint="give a file path inside it")
    folder = path.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    if not folder.is_dir():
        raise DflError(f"{option} {path}: `{folder}` is a file, not a folder")
    try:  # a real probe: os.access says yes to root on read-only mounts and on /proc
        fd, probe = tempfile.mkstemp(prefix=".dfl-probe.", dir=folder)
    except OSError as exc:
        raise DflError(f"{option} {path}: can't write in the folder `{folder}` "
                       f"({exc.strerror or exc})") from None
    os.close(fd)
    os.unlink(probe)
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
        if at is None:
            continue
        if at in seen:
            raise DflError(f"{name} {path} would overwrite {seen[at]}",
                           hint="write it to another file")
        seen[at] = name


def write_atomic(path: Path, write: Callable[[BinaryIO], object]) -> None:
    """Let `write` fill a temp file beside `path`, then rename it over `path`: a failure
    halfway (a full disk, an interrupt) leaves the old file, or none, never half a new one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=path.suffix, dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            write(handle)
        os.chmod(tmp, _file_mode(path))
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _file_mode(path: Path) -> int:
    """The mode a plain `open(path, "w")` would leave: the old file's when it is replaced,
    else 0o666 less the umask (mkstemp's temp file is 0o600, private to its owner)."""
    try:
        return path.stat().st_mode & 0o777
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask
