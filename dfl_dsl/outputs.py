"""The one check of an output path (`--output`, `--save`, `--out`, ...), shared by every command
that writes a file: run before any work, so a path that can't be written is a user error up
front, not an internal error after a long solve or training run, with half the outputs
written."""

from __future__ import annotations

import os
from pathlib import Path

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
