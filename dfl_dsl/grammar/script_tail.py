"""A model file as GLPK's MathProg and AMPL's published models write it: the model, then maybe
`solve;` and output statements (`printf`, `display`, `for {...} {...}`), then maybe `data;`
and the data, and `end;`. This finds where each part starts, so that the parser reads the model
alone; the output statements are reported (not run), and a statement after `solve;` that would
change the model or its data (`let`, `fix`, a second `solve`) is refused at its place."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

from ..ast import Pos
from ..errors import DflError

# statements that only print (MathProg runs them where they stand, AMPL's scripts after `solve`)
OUTPUT_WORDS = frozenset("display printf print for".split())
# after `solve;`, MathProg also declares sets and params from the solution, checks them and
# writes tables (before it, a `table` reads data: not skipped, the parser refuses it)
AFTER_SOLVE_WORDS = OUTPUT_WORDS | {"table", "set", "param", "check"}
_TOKEN = re.compile(r"#[^\n]*|/\*.*?\*/|'(?:[^'\n]|'')*'|\"(?:[^\"\n]|\"\")*\"|"
                    r"[A-Za-z_][A-Za-z0-9_]*|<<|>>|[;{}]|:(?!=)", re.S)
_ANY = re.compile(r"(?:^|[;}])\s*(?:solve|end|data|display|printf|print|for|table)\b", re.M)
_DATA_LINE = re.compile(r"^[ \t]*data[ \t]*;", re.MULTILINE)
_OPEN, _CLOSE = {"{": "}", "<<": ">>"}, {"}", ">>"}


@dataclass
class Statement:
    word: str  # the first word ("" where the statement starts with no word)
    start: int  # offsets in the text: the first token's start, the last token's end
    end: int
    words: int  # how many word tokens it holds
    inner: list[Statement] = field(default_factory=list)  # a `for` block's statements
    name: str = ""  # the second word (the name a `set` or `param` declares)


@dataclass
class Parts:
    """Where a model file's parts are: the model is `text[:model_end]` with the `skipped`
    statements blanked out; the data (if any) starts at `data_start`."""

    model_end: int
    data_start: int | None = None
    skipped: list[Statement] = field(default_factory=list)
    solve: int | None = None  # the offset of `solve;`, where there is one

    @property
    def declared_after_solve(self) -> frozenset[str]:
        """The sets and params declared after `solve;` (the data may give them values, which
        nothing reads)."""
        return frozenset(s.name for s in self.skipped if s.word in ("set", "param") and s.name)


def split(text: str) -> Parts:
    """The parts of model file `text` (a located `DflError` for a statement after `solve;`
    that changes the model or its data)."""
    line = _DATA_LINE.search(text)
    bound = line.start() if line else len(text)
    if not _ANY.search(text, 0, bound):  # (the common case: a model, maybe its data)
        return Parts(bound, line.start() if line else None)
    tokens = [(m.group(), m.start(), m.end()) for m in _TOKEN.finditer(text, 0, bound)
              if m.group()[0] not in "#/'\""]
    parts = Parts(bound, line.start() if line else None)
    for stmt in _statements(tokens, 0, len(tokens), text):
        alone = stmt.words == 1
        if alone and stmt.word in ("data", "end"):  # (`end;`: nothing after it is read)
            parts.model_end = stmt.start if parts.solve is None else parts.model_end
            parts.data_start = stmt.start if stmt.word == "data" else None
            break
        if parts.solve is None and alone and stmt.word == "solve":
            parts.solve = parts.model_end = stmt.start
        elif parts.solve is not None:
            _refuse_change(stmt, text)
            parts.skipped.append(stmt)
        elif _only(stmt, OUTPUT_WORDS):
            parts.skipped.append(stmt)
    return parts


def _only(stmt: Statement, words: frozenset) -> bool:
    """Whether `stmt` (and every statement of its `for` block) starts with one of `words`."""
    return stmt.word in words and all(_only(s, words) for s in stmt.inner)


def _statements(tokens, k: int, stop: int, text: str) -> list[Statement]:
    found = []
    while k < stop:
        if tokens[k][0] == ";":
            k += 1
            continue
        stmt, k = _statement(tokens, k, stop, text)
        found.append(stmt)
    return found


def _statement(tokens, k: int, stop: int, text: str) -> tuple[Statement, int]:
    """The statement starting at token `k`, and the token after it: up to a `;` outside
    braces, or, for `for {...} {...}`, to the block's closing brace."""
    first = tokens[k]
    word = first[0] if first[0][0].isalpha() or first[0][0] == "_" else ""
    if word == "for" and k + 1 < stop and tokens[k + 1][0] == "{":
        after = _group_end(tokens, k + 1, stop)
        if after < stop and tokens[after][0] == ":":  # MathProg's `for {i in I}: {...}`
            after += 1
        if after < stop and tokens[after][0] == "{":
            end = _group_end(tokens, after, stop)
            inner = _statements(tokens, after + 1, end - 1, text)
            return Statement(word, first[1], tokens[end - 1][2], 2, inner), end
        if after < stop:
            body, end = _statement(tokens, after, stop, text)
            return Statement(word, first[1], body.end, 2, [body]), end
    depth, j, words = 0, k, 0
    while j < stop:
        token = tokens[j][0]
        if token in _OPEN:
            depth += 1
        elif token in _CLOSE:
            depth -= 1
        elif token == ";" and depth <= 0:
            break
        elif token != ":":
            words += 1
        j += 1
    end = tokens[min(j, stop - 1)][2]
    name = tokens[k + 1][0] if k + 1 < j and tokens[k + 1][0] not in _OPEN else ""
    if _labelled(tokens, k, j, text):  # `display {i in I}: x[i] >= 1;`: a constraint so named
        word = ""
    return Statement(word, first[1], end, words, name=name), j + 1


def _labelled(tokens, k: int, stop: int, text: str) -> bool:
    """Whether the statement at `k` is a name, maybe an index, then `:` (AMPL's constraint
    without `subject to`, whatever its name) — not `printf {...}: "format", ...`, whose `:`
    opens the text to print (no constraint starts with a string)."""
    after = k + 1
    if after < stop and tokens[after][0] == "{":
        after = _group_end(tokens, after, stop)
    if not (after < stop and tokens[after][0] == ":"):
        return False
    return text[tokens[after][2]:].lstrip()[:1] not in ("'", '"')


def _group_end(tokens, k: int, stop: int) -> int:
    """The token after the brace group that opens at `k`."""
    depth = 0
    for j in range(k, stop):
        depth += tokens[j][0] == "{"
        depth -= tokens[j][0] == "}"
        if depth == 0:
            return j + 1
    return stop


def _refuse_change(stmt: Statement, text: str) -> None:
    """A located error where `stmt` (or a statement of its `for` block) isn't one that may
    follow `solve;`."""
    if stmt.word not in AFTER_SOLVE_WORDS:
        word = stmt.word or re.match(r"[A-Za-z_]\w*|\S", text[stmt.start:]).group()
        raise DflError(
            f"`{word}` after `solve;` would change the model or its data and solve again: a "
            "model file here holds one model, solved once", _pos(text, stmt.start, len(word)),
            hint="only output statements (display, printf, print, for, table, set, param, "
            "check) may follow `solve;`; run `dfl solve` once per variant")
    for part in stmt.inner:
        _refuse_change(part, text)


def not_run_message(parts: Parts, text: str) -> DflError | None:
    """One line saying which output statements are not run, located at the first (None if
    there are none)."""
    if not parts.skipped:
        return None
    counts = Counter(s.word for s in parts.skipped)
    listed = ", ".join(f"{word} {n}" for word, n in counts.most_common())
    n = len(parts.skipped)
    first = parts.skipped[0]
    where = "after `solve;` " if parts.solve is not None and first.start > parts.solve else ""
    return DflError(f"{n} output statement{'s' if n > 1 else ''} {where}{'are' if n > 1 else 'is'}"
                    f" not run ({listed}): `dfl solve` prints the solution (`--json` or "
                    "`--output` for every value)", _pos(text, first.start, len(first.word)))


def model_text(text: str, parts: Parts) -> str:
    """The model part of `text`, each skipped statement blanked (its lines kept, so that
    positions still point into the file)."""
    chunks, at = [], 0
    for stmt in (s for s in parts.skipped if s.start < parts.model_end):
        chunks += [text[at:stmt.start], re.sub(r"[^\n]", " ", text[stmt.start:stmt.end])]
        at = stmt.end
    chunks.append(text[at:parts.model_end])
    return "".join(chunks)


def _pos(text: str, offset: int, width: int) -> Pos:
    line = text.count("\n", 0, offset) + 1
    column = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return Pos(line, column, line, column + width)
