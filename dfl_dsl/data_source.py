"""Where a data mapping came from: the file and text its errors point into (`DataSource`), and
reading a data file's text. Apart from `data.py` so that the readers of each format (`ampl_data`)
and `data.py`, which dispatches to them, both build on it without importing each other."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from .ast import Pos
from .data_formats import key_pos
from .errors import DataError

NO_DATA = "<no data>"  # the name of the empty source a model is bound to without data


@dataclass
class DataSource:
    """A loaded data mapping and where it came from (for error messages)."""

    values: Mapping[str, Any]
    filename: str = "<data>"
    text: str | None = None
    # a param's value for the entries its data leaves out (an AMPL .dat `default`)
    defaults: Mapping[str, Any] = field(default_factory=dict)
    # AMPL reads a .dat file against its model: a name the model doesn't declare is an error
    names_from_model: ClassVar[bool] = False

    def error(self, message: str, key: str | None = None, hint: str | None = None,
              at: Any = None) -> DataError:
        """An error about `key`'s data (`at`: the element or value it is about, where the
        format can point at it)."""
        return DataError(
            message, self.locate(key, at), hint=hint, filename=self.filename, source=self.text
        )

    def locate(self, key: str | None, at: Any = None) -> Pos | None:
        """The line and column of `key` in a JSON or YAML text file; in JSON, of `at` (an
        element key or a value) within `key`'s value where it is written there, so that an
        error about one entry of a long table points at that entry."""
        if key is None or self.text is None:
            return None
        json_text = self.filename.endswith(".json")
        pattern = rf'"{re.escape(key)}"\s*:' if json_text else rf"^\s*{re.escape(key)}\s*:"
        match = re.search(pattern, self.text, flags=re.MULTILINE)
        if match is None:
            return None
        wanted = list(at) if isinstance(at, tuple) else [at]
        if json_text and all(isinstance(w, (str, int, float)) and not isinstance(w, bool)
                             for w in wanted):
            found = _written_within(self.text, match.end(), wanted)
            if found is not None:
                return found
        start = match.start() + (len(match.group(0)) - len(match.group(0).lstrip()))
        return key_pos(self.text, start, key)


_JSON_WORD = re.compile(r'"(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?|NaN|-?Infinity')


def _written_within(text: str, start: int, wanted: list) -> Pos | None:
    """The first run of string or number tokens equal to `wanted` (an element, a tuple's
    components) in the JSON value that begins after offset `start` (a key's colon); None when
    the value can't be decoded or holds no such run. Only on an error: the value is decoded
    again to find where it ends."""
    begin = start + len(text[start:]) - len(text[start:].lstrip())
    try:
        _, end = json.JSONDecoder().raw_decode(text, begin)
    except ValueError:
        return None
    tokens = list(_JSON_WORD.finditer(text, begin, end))
    for n in range(len(tokens) - len(wanted) + 1):
        if all(_same(tokens[n + m].group(0), w) for m, w in enumerate(wanted)):
            first, last = tokens[n], tokens[n + len(wanted) - 1]
            line = text.count("\n", 0, first.start()) + 1
            column = first.start() - (text.rfind("\n", 0, first.start()) + 1) + 1
            width = last.end() - first.start() if "\n" not in text[first.start():last.end()] \
                else len(first.group(0))
            return Pos(line, column, line, column + width)
    return None


def _same(word: str, wanted: str | int | float) -> bool:
    """Whether the JSON token `word` writes `wanted` (a text, or a number)."""
    if word.startswith('"'):
        return json.loads(word) == wanted
    return not isinstance(wanted, str) and float(word) == wanted


def read_text(path: Path) -> str:
    """A data file's text (a byte-order mark, which Windows editors write, left out)."""
    return reading(path, lambda p: p.read_text().removeprefix("\ufeff"))


def reading(path: Path, read: Callable[[Path], Any]) -> Any:
    """`read(path)`, its OS errors as located `DataError`s."""
    try:
        return read(path)
    except FileNotFoundError:
        raise DataError("data file not found", filename=str(path)) from None
    except OSError as exc:
        raise DataError(f"can't read data file: {exc.strerror}", filename=str(path)) from None
    except UnicodeDecodeError:
        raise DataError("the data file is not UTF-8 text", filename=str(path)) from None
