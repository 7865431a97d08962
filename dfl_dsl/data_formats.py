"""Reading a data file's contents strictly: JSON and YAML that refuse a key given twice in one
object (both parsers would keep the last value without a word), and NPZ archives read without
pickles. Errors are `DataError`s located in the text where it has one."""

from __future__ import annotations

import json
import re
import zipfile
from pathlib import Path

import numpy as np

from .ast import Pos
from .errors import DataError


def key_pos(text: str, start: int, key: str) -> Pos:
    """The span of a key written at offset `start` of `text` (quoted: key plus two)."""
    line = text.count("\n", 0, start) + 1
    column = start - (text.rfind("\n", 0, start) + 1) + 1
    return Pos(line, column, line, column + len(key) + 2)


class _DuplicateKey(Exception):
    pass


def _unique_pairs(pairs: list) -> dict:
    out = dict(pairs)
    if len(out) < len(pairs):  # json.loads would keep the last value without a word
        seen: set = set()
        for key, _ in pairs:
            if key in seen:
                raise _DuplicateKey(key)
            seen.add(key)
    return out


def parse_json(text: str, filename: str):
    try:
        return json.loads(text, object_pairs_hook=_unique_pairs)
    except json.JSONDecodeError as exc:
        pos = Pos(exc.lineno, exc.colno, exc.lineno, exc.colno + 1)
        message = f"invalid JSON: {exc.msg}"
        if exc.pos >= len(text.rstrip()) or exc.msg.startswith("Unterminated string"):
            message = f"invalid JSON: the file ends early ({exc.msg})"
        raise DataError(message, pos, filename=filename, source=text) from None
    except _DuplicateKey as exc:
        key = str(exc.args[0])
        hits = list(re.finditer(rf'"{re.escape(key)}"\s*:', text))
        pos = None
        if len(hits) >= 2:  # (the second one written is the likely repeat)
            pos = key_pos(text, hits[1].start(), key)
        raise DataError(f"key {json.dumps(key)} appears twice in one object", pos,
                        filename=filename, source=text,
                        hint="JSON would silently keep only the last value") from None


def parse_yaml(text: str, filename: str):
    import yaml

    try:
        return yaml.load(text, Loader=_unique_yaml_loader())  # noqa: S506 (a SafeLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        pos = Pos(mark.line + 1, mark.column + 1, mark.line + 1, mark.column + 2) if mark else None
        problem = getattr(exc, "problem", None) or str(exc)
        raise DataError(f"invalid YAML: {problem}", pos, filename=filename, source=text) from None


def _unique_yaml_loader():
    """yaml's SafeLoader, refusing a key given twice in one mapping (it keeps the last)."""
    import yaml

    class Loader(yaml.SafeLoader):
        def construct_mapping(self, node, deep=False):
            seen = set()
            for key_node, _ in node.value:
                key = self.construct_object(key_node, deep=deep)
                if not isinstance(key, (str, int, float, bool)):
                    continue  # (an unhashable key: the base class reports it)
                if key in seen:
                    raise yaml.constructor.ConstructorError(
                        None, None, f"key {key!r} appears twice in one mapping",
                        key_node.start_mark)
                seen.add(key)
            return super().construct_mapping(node, deep=deep)

    return Loader


def load_npz(path: Path) -> dict[str, np.ndarray]:
    with path.open("rb") as fh:  # (a missing file raises FileNotFoundError: load_data names it)
        if not zipfile.is_zipfile(fh):  # np.load would take it as .npy or pickle by its bytes
            raise DataError("not a valid npz file (not a zip archive of arrays; "
                            "np.savez writes one)", filename=str(path))
    key = None
    try:
        with np.load(path, allow_pickle=False) as archive:
            out = {}
            for key in archive.files:
                out[key] = archive[key]
            return out
    except ValueError as exc:
        what = f"array `{key}`: " if key is not None else ""
        raise DataError(f"can't read the npz file: {what}{exc}", filename=str(path)) from None
    except (OSError, EOFError, zipfile.BadZipFile) as exc:
        raise DataError(f"not a valid npz file ({exc})", filename=str(path)) from None
