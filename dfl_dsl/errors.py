"""User-facing errors: every mistake a user can make is reported as

    FILE:LINE:COL: error: MESSAGE
        the offending source line
              ^
    hint: ...

and the CLI turns it into exit status 2, never a traceback.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

from .ast import NOWHERE, Pos


class DflError(Exception):
    """A mistake in a model or data file, located at `pos` in `filename`."""

    def __init__(
        self,
        message: str,
        pos: Pos | None = None,
        *,
        hint: str | None = None,
        filename: str | None = None,
        source: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.pos = pos or NOWHERE
        self.hint = hint
        self.filename = filename
        self.source = source

    def located(self, filename: str, source: str | None) -> DflError:
        """Attach the file this error belongs to (only where no file is known yet)."""
        if self.filename is None:
            self.filename = filename
            self.source = source
        return self

    def __str__(self) -> str:
        return self.format()

    def format(self, severity: str = "error") -> str:
        # an error about the command line itself (an option's value) has no file to point at
        where = self.filename or ("<input>" if self.pos.line else "dfl")
        if self.pos.line:
            where += f":{self.pos.line}:{self.pos.column}"
        lines = [f"{where}: {severity}: {self.message}"]
        if self.pos.line and self.source is not None:
            lines.extend(self._excerpt())
        if self.hint:
            lines.append(f"hint: {self.hint}")
        return "\n".join(lines)


    def _excerpt(self) -> list[str]:
        """The offending line and a caret under the span; a long line (a minified JSON file,
        a generated model) only in a window around the column."""
        line = _line(self.source, self.pos.line)
        if line is None:
            return []
        text = line.expandtabs(1)
        width = 1
        if self.pos.end_line == self.pos.line and self.pos.end_column > self.pos.column:
            width = self.pos.end_column - self.pos.column
        at = self.pos.column - 1
        if len(text) > WINDOW:
            start = min(max(0, at - WINDOW // 3), len(text) - WINDOW)
            head = "..." if start else ""
            tail = "..." if start + WINDOW < len(text) else ""
            text = head + text[start : start + WINDOW] + tail
            at += len(head) - start
            width = min(width, len(head) + WINDOW - at)
        return ["    " + text, "    " + " " * at + "^" * max(width, 1)]


WINDOW = 100  # characters of a long source line shown around an error's column


def _line(source: str, number: int) -> str | None:
    """Line `number` (1-based) of `source`, found without splitting all of a big file."""
    if number < 1:
        return None
    start = 0
    for _ in range(number - 1):
        start = source.find("\n", start) + 1
        if not start:
            return None
    end = source.find("\n", start)
    return source[start:] if end < 0 else source[start:end]


class DataError(DflError):
    """A mistake in a data file: names the file, the key and, where there is one, the index."""


class DataWarning(UserWarning):
    """Data the model will not use but that looks meant for it — a key one edit away from a
    set or param the data leaves out, which then silently takes its default. Not an error (one
    data file may serve several models); the text is formatted like an error's, as a warning."""


class ModelWarning(UserWarning):
    """Statements of a model file that are read but not run — the output statements of a
    MathProg model or an AMPL run-script tail (`printf`, `display` after `solve;`): formatted
    like an error, as a warning."""


class InfeasibleError(Exception):
    """The problem has no solution (CLI exit status 1)."""


def did_you_mean(name: str, candidates: Iterable[str]) -> str | None:
    """A hint naming the closest known name, if any is close enough; a name that differs only
    in case comes first (difflib scores `M` against `m` as unlike as any two letters)."""
    candidates = list(candidates)
    close = [c for c in candidates if c.lower() == name.lower() and c != name]
    close = close or difflib.get_close_matches(name, candidates, n=1, cutoff=0.6)
    return f"did you mean `{close[0]}`?" if close else None
