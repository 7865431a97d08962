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
    if not os.access(folder, os.W_OK | os.X_OK):
        raise DflError(f"{option} {path}: the folder `{folder}` is not writable")
    return path


def write_atomic(path: Path, write: Callable[[BinaryIO], object]) -> None:
    """Let `write` fill a temp file beside `path`, then rename it over `path`: a failure
    halfway (a full disk, an interrupt) leaves the old file, or none, never half a new one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=path.suffix, dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            write(handle)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
