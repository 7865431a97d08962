"""The entries of AMPL data statements: lists, tables and several params in one list, put into
nested objects keyed by element (one level per subscript), with each mistake located.

A table of numbers (the bulk of a big file) is converted in one numpy call and put row by row
with `dict.update`; anything else — a `.`, a slice, `(tr)`, text values — entry by entry.
"""

from __future__ import annotations

import re
from collections import Counter

import numpy as np

from .ampl_tokens import MISSING, Tokens, element, is_number, is_word, value

_PUNCTUATION = frozenset(":= : ; , ( ) [ ]".split())
_NUMERIC_TEXT = re.compile(r"[0-9eE+\-. ]*")


class TableReader:
    def __init__(self, tokens: Tokens, schema) -> None:
        self.tk = tokens
        self.t = tokens.strings
        self.schema = schema
        self.values: dict = {}
        self.defaults: dict = {}
        self.spans: dict[str, list[tuple[int, int]]] = {}
        self.named: dict[str, int] = {}

    # ------------------------------------------------------------------ small readers
    def _close(self, k: int, end: int, closing: str) -> int:
        try:
            return self.t.index(closing, k, end)
        except ValueError:
            raise self.tk.error(f"`{self.t[k]}` is not closed by `{closing}`", k) from None

    def _words(self, k: int, end: int, what: str, star: bool = False,
               dots: bool = False) -> list[int]:
        """Token indices of the elements in `k`..`end` (commas between them skipped; `*` in
        a template, `.` among values). Checked once per distinct word: a table's rows repeat
        their values."""
        words = self.t[k:end]
        if self.tk.plain:  # bare words and punctuation only: look for the punctuation
            if _PUNCTUATION.isdisjoint(words) and (dots or MISSING not in words) and (
                    star or "*" not in words):
                return list(range(k, end))
        elif all((is_word(w) or star and w == "*") and (w != MISSING or dots)
                 for w in set(words)) and "," not in words:
            return list(range(k, end))
        out = []
        for j in range(k, end):
            word = self.t[j]
            if word == ",":
                continue
            if not (is_word(word) or star and word == "*") or word == MISSING and not dots:
                quote = " (the quote is not closed on its line)" if word in ("'", '"') else ""
                hint = None if word in _PUNCTUATION or quote or word in "*." else (
                    "an element without quotes holds letters, digits and _ . + - only: quote "
                    "one with other characters, 'São Paulo'")
                raise self.tk.error(f"{what}: unexpected `{word}`{quote}", j, hint=hint)
            out.append(j)
        return out

    def _stop(self, k: int, end: int, *marks: str) -> int:
        """The first of `marks` at or after `k` (before `end`), else `end`."""
        stop = end
        for mark in marks:
            try:
                stop = self.t.index(mark, k, stop)
            except ValueError:
                pass
        return stop

    def _tr(self, k: int, end: int) -> tuple[bool, int]:
        if k + 2 < end and self.t[k] == "(" and self.t[k + 1] == "tr" and self.t[k + 2] == ")":
            return True, k + 3
        return False, k

    def _node(self, name: str, k: int) -> dict:
        node = self.values.setdefault(name, {})
        if not isinstance(node, dict):
            raise self.tk.error(f"param `{name}` is given twice", k)
        return node

    def _put(self, name: str, node: dict, keys: list, val, k: int) -> None:
        for key in keys[:-1]:
            node = node.setdefault(key, {})
            if not isinstance(node, dict):
                raise self.tk.error(f"param `{name}`: the entries have different numbers of "
                                    "subscripts", k)
        if keys[-1] in node:
            raise self.tk.error(f"param `{name}`{_shown(keys)} is given twice", k)
        node[keys[-1]] = val

    def _number(self, name: str, word: str, k: int, keys: list) -> None:
        """A numeric param's value must be a number (or `.`): a word there is often a
        subscript that a missing value moved into its place."""
        if word != MISSING and name in self.schema.numeric and not is_number(word):
            raise self.tk.error(f"param `{name}`{_shown(keys)}: expected a number, got `{word}`",
                                k, hint="a value left out moves the words after it: give each "
                                "entry its value, or `.` for none")

    def _guess_arity(self, idx: list[int], values: int) -> int:
        """Subscripts per entry of a list the model doesn't describe: the fewest that put a
        number in every value's place and, when every line holds as many words, fit whole
        entries on each line (`1 2 5` / `2 3 6` is two entries of two subscripts, not three
        of one)."""
        idx = [j for j in idx if self.t[j] != ","]
        counts = Counter(self.tk.line(j) for j in idx)
        widths = set(counts.values())
        line = next(iter(widths)) if len(counts) > 1 and len(widths) == 1 else None
        fits = [a for a in range(1, 9) if len(idx) % (a + values) == 0 and all(
            is_number(self.t[j]) or self.t[j] == MISSING
            for g in range(0, len(idx), a + values) for j in idx[g + a : g + a + values])]
        laid_out = [a for a in fits if line is not None and line % (a + values) == 0]
        return (laid_out or fits or [1])[0]

    # ------------------------------------------------------------------ lists
    def entry_list(self, name: str, node: dict, k: int, stop: int, template: list) -> None:
        """Entries `subscripts value` (the subscripts fill the template's `*`s)."""
        t = self.t
        free = template.count(None)
        idx = self._words(k, stop, f"param `{name}`", dots=True)
        width = free + 1
        if len(idx) % width:
            raise self._short(name, idx, width, free, "entry")
        full = all(slot is None for slot in template)
        if full and self._fast_list(name, node, idx, free):
            return
        for g in range(0, len(idx), width):
            keys = [element(t[j]) for j in idx[g : g + free]]
            j = idx[g + free]
            if t[j] == MISSING:
                continue
            keys = keys if full else _fill(template, keys)
            self._number(name, t[j], j, keys)
            self._put(name, node, keys, value(t[j]), idx[g])

    def _fast_list(self, name: str, node: dict, idx: list[int], free: int) -> bool:
        """A list of numbers read column by column: the values in one numpy call, each
        distinct subscript converted once; False (nothing put) when not every value is a
        plain number or a subscript repeats in a one-subscript list."""
        t, width = self.t, free + 1
        if not idx or idx[-1] + 1 - idx[0] != len(idx):  # (commas in between)
            return False
        body = t[idx[0] : idx[-1] + 1]
        numbers = _numbers(body[free::width])
        if numbers is None:
            return False
        columns = [_elements(body[p::width]) for p in range(free)]
        if free == 1:
            if len(set(columns[0])) != len(numbers) or not node.keys().isdisjoint(columns[0]):
                return False  # (entry by entry: says which is given twice)
            node.update(zip(columns[0], numbers, strict=True))
            return True
        if free > 2:
            for g, (keys, number) in enumerate(zip(zip(*columns, strict=True), numbers,
                                                   strict=True)):
                self._put(name, node, list(keys), number, idx[0] + g * width)
            return True
        for g, (a, b, number) in enumerate(zip(*columns, numbers, strict=True)):
            row = node.get(a)
            if row is None:
                row = node[a] = {}
            elif type(row) is not dict or b in row:  # (says what is wrong)
                self._put(name, node, [a, b], number, idx[0] + g * width)
            row[b] = number
        return True

    def several_list(self, params: list[str], set_name: str | None, k: int, end: int) -> None:
        """The body of `param: [SET:] A B := ...`: entries of subscripts and one value per
        param; `SET` (if named) gets the entries' subscripts as its members."""
        t = self.t
        dims = [self.schema.dims.get(p) for p in params]
        arity = next((d for d in dims if d is not None), None)
        for param, dim in zip(params, dims, strict=True):
            if dim is not None and (dim == 0 or dim != arity):  # (the model's widths)
                raise self.tk.error(f"param `{param}` has {dim} subscripts, but `{params[0]}`"
                                    f" in the same list has {arity}" if dim else
                                    f"param `{param}` is one value, not entries with "
                                    "subscripts", self.named[param],
                                    hint=f"give it in its own `param {param} := ...;`")
        if arity is None and set_name is not None:
            arity = self.schema.dims.get(set_name)
        idx = self._words(k, end, f"param `{params[0]}`", dots=True)
        if arity is None:
            arity = self._guess_arity(idx, len(params))
        width = arity + len(params)
        if len(idx) % width:
            raise self._short(params[0], idx, width, arity, "entry")
        nodes = [self._node(p, k) for p in params]
        members, where = [], []
        for g in range(0, len(idx), width):
            keys = [element(t[j]) for j in idx[g : g + arity]]
            members.append(keys if arity > 1 else keys[0])
            where.append(idx[g])
            for p, node, j in zip(params, nodes, idx[g + arity : g + width], strict=True):
                if t[j] != MISSING:
                    self._number(p, t[j], j, keys)
                    self._put(p, node, keys, value(t[j]), idx[g])
        if set_name is not None:
            self._unique_members(set_name, members, where)
            if set_name in self.values:
                raise self.tk.error(f"set `{set_name}` is given twice", self.named[set_name])
            self.values[set_name] = members

    # ------------------------------------------------------------------ tables
    def _header(self, name: str, k: int, end: int) -> tuple[list[int], int]:
        """A table's column labels (token indices) after the `:` at `k`, and where its rows
        start (after `:=`)."""
        stop = self._stop(k + 1, end, ":=")
        if stop == end:
            raise self.tk.error(f"the table of `{name}` has no `:=` after its column labels", k)
        cols = self._words(k + 1, stop, f"the table of `{name}`")
        seen: set = set()
        for j in cols:
            if element(self.t[j]) in seen:
                raise self.tk.error(f"the table of `{name}` has the column `{self.t[j]}` twice",
                                    j)
            seen.add(element(self.t[j]))
        return cols, stop + 1

    def table(self, name: str, node: dict, k: int, end: int, template: list, tr: bool) -> int:
        """A table `: c1 c2 ... := r v v ...`: rows until the next `:`, `[`, `(` or the end.
        Each row is the labels of all `*`s but one, then one value per column."""
        t = self.t
        free = template.count(None)
        if free < 2:
            raise self.tk.error(f"param `{name}`: a table needs two `*` in the slice before it",
                                k)
        cols, k = self._header(name, k, end)
        stop = self._stop(k, end, ":", "[", "(")
        idx = self._words(k, stop, f"the table of `{name}`", dots=True)
        labels, ncol = free - 1, len(cols)
        width = labels + ncol
        if len(idx) % width:
            raise self._short(name, idx, width, labels, "row")
        heads = [element(t[j]) for j in cols]
        if not tr and labels == 1 and all(s is None for s in template) and self._fast_rows(
            name, node, idx, heads
        ):
            return stop
        for g in range(0, len(idx), width):
            row = [element(t[j]) for j in idx[g : g + labels]]
            for head, j in zip(heads, idx[g + labels : g + width], strict=True):
                if t[j] == MISSING:
                    continue
                keys = _fill(template, [head, *row] if tr else [*row, head])
                self._number(name, t[j], j, keys)
                self._put(name, node, keys, value(t[j]), j)
        return stop

    def _fast_rows(self, name: str, node: dict, idx: list[int], heads: list) -> bool:
        """A table of numbers read in one numpy call and put row by row; False (nothing put)
        when not every value is a plain number."""
        t, width = self.t, len(heads) + 1
        first, last = idx[0] if idx else 0, idx[-1] + 1 if idx else 0
        if last - first != len(idx):  # (commas in between)
            return False
        body = t[first:last]
        cells = [w for g in range(0, len(body), width) for w in body[g + 1 : g + width]]
        numbers = _numbers(cells)
        if numbers is None:
            return False
        ncol = len(heads)
        for r, g in enumerate(range(0, len(body), width)):
            row = node.setdefault(element(body[g]), {})
            before = len(row)
            row.update(zip(heads, numbers[r * ncol : (r + 1) * ncol], strict=True))
            if len(row) != before + ncol:
                raise self.tk.error(f"param `{name}`: row `{body[g]}` gives entries given "
                                    "before", first + g)
        return True

    def _set_table(self, name: str, k: int, end: int, tr: bool) -> list:
        """`set S: c1 c2 := r + - ...`: the pairs (r, c) marked `+`."""
        t = self.t
        cols, k = self._header(name, k, end)
        idx = self._words(k, end, f"the table of `{name}`")
        width = len(cols) + 1
        if len(idx) % width:
            raise self._short(name, idx, width, 1, "row")
        heads = [element(t[j]) for j in cols]
        out, where = [], []
        for g in range(0, len(idx), width):
            row = element(t[idx[g]])
            for head, j in zip(heads, idx[g + 1 : g + width], strict=True):
                if t[j] not in ("+", "-"):
                    raise self.tk.error(f"the table of set `{name}`: expected `+` or `-`, got "
                                        f"`{t[j]}`", j)
                if t[j] == "+":
                    out.append([head, row] if tr else [row, head])
                    where.append(j)
        self._unique_members(name, out, where)
        return out

    def _unique_members(self, name: str, out: list, where: list[int]) -> None:
        keys = [tuple(m) if isinstance(m, list) else m for m in out]
        if len(set(keys)) == len(keys):
            return
        seen: set = set()
        for key, k in zip(keys, where, strict=True):
            if key in seen:
                raise self.tk.error(f"set `{name}` lists {_shown_member(key)} twice", k)
            seen.add(key)


    def _short(self, name: str, idx: list[int], width: int, keys: int, what: str):
        """The error for tokens that are not whole rows (entries). A table's rows are one per
        line: the first line whose count is off. A list's first value that is no number (a
        value left out moves the words after it); else its first line with a count that is
        off, else the leftover words."""
        if what == "entry":
            for g in range(0, len(idx) - width + 1, width):
                for j in idx[g + keys : g + width]:
                    self._number(name, self.t[j], j, [element(self.t[i])
                                                      for i in idx[g : g + keys]])
        error = self._odd_line(name, idx, width, keys, what)
        if error is not None:
            return error
        rest = idx[len(idx) - len(idx) % width :]
        return self._entry_short(name, [self.t[j] for j in rest], keys, width - keys, rest[0])

    def _odd_line(self, name: str, idx: list[int], width: int, keys: int, what: str):
        lines = [self.tk.line(j) for j in idx]
        counts = Counter(lines)
        bad = next((line for line in lines if counts[line] % width), None)
        if bad is None:
            return None
        on_line = [i for i, li in zip(idx, lines, strict=True) if li == bad]
        words = [self.t[i] for i in on_line]
        if what == "row" and len(words) < 2 * width:
            have = len(words) - keys
            return self.tk.error(
                f"param `{name}`: row {_label(words[:keys])} has {have} value"
                f"{'s' if have != 1 else ''}, but the table has {width - keys} columns",
                on_line[0], hint="write `.` for an entry without a value")
        rest = len(words) % width if len(words) > width else len(words)
        return self._entry_short(name, words[len(words) - rest :], keys, width - keys,
                                 on_line[len(words) - rest])

    def _entry_short(self, name: str, words: list[str], keys: int, values: int, k: int):
        if len(words) == keys:
            return self.tk.error(f"param `{name}`{_shown([element(w) for w in words])} has no "
                                 "value", k, hint="give its value, or `.` for none")
        return self.tk.error(
            f"param `{name}`: {len(words)} words where an entry is {keys} subscript"
            f"{'s' if keys != 1 else ''} and {values} value{'s' if values != 1 else ''}", k,
            hint="write `.` for an entry without a value")


def _numbers(cells: list[str]) -> list | None:
    """Plain numbers written as text, converted in one numpy call (ints where all are
    integers); None when one isn't a plain number (`.`, `Infinity`, a word)."""
    text = " ".join(cells)
    if not _NUMERIC_TEXT.fullmatch(text):
        return None
    try:
        numbers = np.array(cells, dtype=float)
    except ValueError:
        return None
    if not any(c in text for c in ".eE") and (not len(numbers) or
                                             np.abs(numbers).max() < 2.0**53):
        return numbers.astype(np.int64).tolist()
    return numbers.tolist()


def _elements(words: list[str]) -> list:
    """`element` of each word, each distinct word converted once."""
    known = {word: element(word) for word in set(words)}
    return list(map(known.__getitem__, words))


def _fill(template: list, keys: list) -> list:
    """A template's `*`s filled by `keys`, in order."""
    it = iter(keys)
    return [next(it) if slot is None else slot for slot in template]


def _label(words: list[str]) -> str:
    return " ".join(words) if len(words) == 1 else _shown([element(w) for w in words])


def _shown(keys: list) -> str:
    return "[" + ", ".join(map(str, keys)) + "]" if keys else ""


def _shown_member(key) -> str:
    return "(" + ", ".join(map(str, key)) + ")" if isinstance(key, tuple) else str(key)
