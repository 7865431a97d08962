"""Where a data mapping came from: the file and text its errors point into (`DataSource`), and
reading a data file's text. Apart from `data.py` so that the readers of each format (`ampl_data`)
and `data.py`, which dispatches to them, both build on it without importing each other."""

from __future__ import annotations

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
        """The line and column of `key` in a JSON or YAML text file."""
        if key is None or self.text is None:
            return None
        pattern = rf'"{re.escape(key)}"\s*:' if self.filename.endswith(".json") else (
            rf"^\s*{re.escape(key)}\s*:"
        )
        match = re.search(pattern, self.text, flags=re.MULTILINE)
        if match is None:
            return None
        start = match.start() + (len(match.group(0)) - len(match.group(0).lstrip()))
        return key_pos(self.text, start, key)


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
