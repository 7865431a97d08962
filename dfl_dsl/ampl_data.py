"""AMPL data files (.dat), read into the mapping a JSON data file gives (docs/language.md §12),
so that binding, its checks and its messages are the same for both.

Read: `set` statements (members, tuples in parentheses or flat, templates `(a,*)`, tables of
`+`/`-`, `set S[i] := ...` for an indexed set), `param` statements (lists, several params in
one list `param: A B := ...` and `param: SET: A B := ...`, tables with a `:` header and `:=`,
`(tr)`, slices `[*, j]` and `[i, *, *]`, `default`, `.` for an entry without a value,
`Infinity`), `data;`, `end;`, `#` and `/* */` comments. A param becomes nested objects keyed by
element, one level per subscript; a set a list of elements (lists for tuples); an indexed set
an object of member lists; `Infinity` the text "inf", as in JSON. A `default` in the data is
kept beside the mapping (`DataSource.defaults`) and fills the entries the data leaves out.

AMPL reads a data file with the model at hand, which says how many subscripts an entry has
(`param cost := GARY FRA 39 ...`) and how wide a set's tuples are (`set ARCS := 1 2 2 3;`).
`Schema` carries that; without a model (converting a file) the widths come from the file:
tuples in parentheses, templates, tables, and a list's layout (see `_guess_arity`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from .ampl_tables import TableReader, _fill, _shown
from .ampl_tokens import MISSING, Tokens, element, is_name, is_word, value
from .ast import Pos
from .data_source import DataSource, read_text

COMMANDS = frozenset("let display solve model option for include printf print reset update drop "
                     "restore fix unfix commands shell objective problem expand write".split())


@dataclass
class Schema:
    """What the model says about the names in a data file: a set's tuple width or a param's
    number of subscripts (`dims`), and which params hold numbers (`numeric`)."""

    dims: Mapping[str, int] = field(default_factory=dict)
    numeric: frozenset[str] = frozenset()


def model_schema(model) -> Schema:
    """The `Schema` of a checked model's sets and params (a width the model leaves to the data,
    `set S;` used only whole, stays unknown)."""
    dims: dict[str, int] = {}
    numeric = set()
    for symbol in model.symbols.values():
        if symbol.kind == "set" and getattr(symbol, "dim", None):
            dims[symbol.name] = symbol.dim
        elif symbol.kind == "param":
            if getattr(symbol, "arity", None) is not None:
                dims[symbol.name] = symbol.arity
            if not symbol.decl.is_element:
                numeric.add(symbol.name)
    return Schema(dims, frozenset(numeric))


@dataclass
class DatSource(DataSource):
    """A data mapping read from a .dat file: errors found later (at binding) point at the
    statement that gives the name, or at the element or value they are about."""

    tokens: Tokens | None = None
    spans: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    named: dict[str, int] = field(default_factory=dict)
    names_from_model: ClassVar[bool] = True

    def locate(self, key: str | None, at: Any = None) -> Pos | None:
        if key is None or key not in self.named or self.tokens is None:
            return None
        if at is not None:
            found = self._find(key, list(at) if isinstance(at, tuple) else [at])
            if found is not None:
                return self.tokens.pos(found)
        return self.tokens.pos(self.named[key])

    def _find(self, key: str, wanted: list) -> int | None:
        """The first token of the words `wanted` (an element, or a tuple's components, with
        punctuation between them) in the statements that give `key`."""
        strings = self.tokens.strings
        for start, end in self.spans.get(key, ()):
            words = [k for k in range(start, end) if is_word(strings[k])]
            for n in range(len(words) - len(wanted) + 1):
                if all(_same(strings[words[n + m]], w) for m, w in enumerate(wanted)):
                    return words[n]
        return None


def _same(word: str, wanted: Any) -> bool:
    return element(word) == wanted or value(word) == wanted


def read_dat(path: str | Path, schema: Schema | None = None) -> DatSource:
    """Read the .dat file at `path` (errors: `DataError`, located)."""
    text = read_text(Path(path))
    return parse_dat(text, str(path), schema)


def parse_dat(text: str, filename: str, schema: Schema | None = None,
              start: int = 0) -> DatSource:
    """The data statements of `text` from offset `start` on (a model file's `data;` part:
    positions still count from the top of the file)."""
    tokens = Tokens(text, filename, start)
    reader = _Reader(tokens, schema or Schema())
    reader.read()
    return DatSource(reader.values, filename, text, defaults=reader.defaults, tokens=tokens,
                     spans=reader.spans, named=reader.named)


class _Reader(TableReader):
    """The statements, one by one; tables and lists are read by `TableReader`."""

    def read(self) -> None:
        t, k = self.t, 0
        while k < len(t):
            word = t[k]
            if word == ";":
                k += 1
                continue
            if word in ("data", "end") and k + 1 < len(t) and t[k + 1] == ";":
                if word == "end":
                    return
                k += 2
                continue
            if word not in ("set", "param"):
                raise self._not_statement(k)
            end = self._end(k)
            if word == "set":
                self._set(k, end)
            else:
                self._param(k, end)
            k = end + 1

    def _not_statement(self, k: int):
        word = self.t[k]
        if word in COMMANDS:
            return self.tk.error(f"`{word}` is an AMPL command, not data: a data file holds "
                                 "`set` and `param` statements", k)
        if word in ("'", '"'):
            return self.tk.error("the quote is not closed on its line", k)
        return self.tk.error(f"expected a `set` or `param` statement, got `{word}`", k)

    def _end(self, k: int) -> int:
        """The `;` that ends the statement at `k`; a statement keyword before it means the
        statement at `k` lacks its `;`."""
        t = self.t
        try:
            end = t.index(";", k)
        except ValueError:
            raise self.tk.error(f"the `{' '.join(t[k:k + 2])}` statement is not closed: `;` "
                                "expected at its end", k,
                                hint="end every set and param statement with `;`") from None
        for word in ("set", "param"):
            at = k
            while True:
                try:
                    at = t.index(word, at + 1, end)
                except ValueError:
                    break
                if at + 2 < end and t[at + 2] in (":=", ":", "default", "[", "("):
                    raise self.tk.error(
                        f"`{word}` starts a new statement, but the `{' '.join(t[k:k + 2])}` "
                        f"statement (line {self.tk.line(k)}) is not closed", at,
                        hint="end every set and param statement with `;`")
        return end

    def _name(self, k: int, end: int, what: str) -> str:
        if k >= end or not is_name(self.t[k]):
            raise self._expected(k, f"the {what}'s name", what)
        return self.t[k]

    def _expected(self, k: int, what: str, where: str):
        got = f"`{self.t[k]}`" if self.t[k] != ";" else "the end of the statement"
        return self.tk.error(f"{where}: expected {what}, got {got}", k)

    def _note(self, name: str, start: int, end: int, at: int) -> None:
        self.spans.setdefault(name, []).append((start, end))
        self.named.setdefault(name, at)

    # ------------------------------------------------------------------ sets
    def _set(self, k0: int, end: int) -> None:
        t = self.t
        name = self._name(k0 + 1, end, "set")
        k = k0 + 2
        index = None
        if k < end and t[k] == "[":
            close = self._close(k, end, "]")
            index = [element(t[j]) for j in self._words(k + 1, close, f"set `{name}`")]
            if not index:  # `set S[] := ...`
                raise self._expected(close, "a subscript", f"set `{name}`")
            k = close + 1
        self._note(name, k0, end, k0 + 1)
        tr, k = self._tr(k, end)
        if k < end and t[k] == ":":
            members = self._set_table(name, k, end, tr)
        elif k < end:  # (MathProg's data may leave out the `:=`: `set S a, b;`)
            members = self._members(name, k + (t[k] == ":="), end, self.schema.dims.get(name))
        else:
            raise self._expected(k, "`:=` or a table", f"set `{name}`")
        self._store_set(name, index, members, k0 + 1)

    def _store_set(self, name: str, index: list | None, members: list, k: int) -> None:
        if index is None:
            if name in self.values:
                raise self.tk.error(f"set `{name}` is given twice", k)
            self.values[name] = members
            return
        node = self.values.setdefault(name, {})
        if not isinstance(node, dict):
            raise self.tk.error(f"set `{name}` is given whole and by index", k)
        for key in index[:-1]:
            node = node.setdefault(key, {})
        if index[-1] in node:
            raise self.tk.error(f"set `{name}{_shown(index)}` is given twice", k)
        node[index[-1]] = members

    def _members(self, name: str, k: int, end: int, dim: int | None) -> list:
        """Members written one after another: elements, tuples in parentheses, or templates
        `(a, *)` whose `*`s the elements after them fill."""
        t = self.t
        what = f"set `{name}`"
        paren = self._stop(k, end, "(")
        if paren == end and (dim or 1) == 1:  # plain elements: checked in one pass
            where = self._words(k, end, what)
            out = [element(t[j]) for j in where]
            self._unique_members(name, out, where)
            return out
        out, where = [], []
        template = None
        while k < end:
            if t[k] == ",":
                k += 1
            elif t[k] == "(":
                close = self._close(k, end, ")")
                parts = self._words(k + 1, close, what, star=True)
                if any(t[j] == "*" for j in parts):
                    template = [None if t[j] == "*" else element(t[j]) for j in parts]
                    dim = self._width(name, dim, len(template), k)
                else:
                    dim = self._width(name, dim, len(parts), k)
                    out.append([element(t[j]) for j in parts])
                    where.append(k)
                k = close + 1
                paren = self._stop(k, end, "(")
            else:
                free = template.count(None) if template else (dim or 1)
                dim = dim or 1
                group = self._words(k, min(paren, k + free), what)
                if len(group) < free:
                    raise self.tk.error(f"{what}: a member has {len(group)} of its {free} "
                                        "components", k)
                keys = [element(t[j]) for j in group]
                out.append(_fill(template, keys) if template else keys if dim > 1 else keys[0])
                where.append(k)
                k = group[-1] + 1
        self._unique_members(name, out, where)
        return out

    def _width(self, name: str, dim: int | None, width: int, k: int) -> int:
        if dim is not None and dim != width:
            raise self.tk.error(f"set `{name}` holds {dim}-tuples, this member has {width} "
                                "components", k)
        return width

    # ------------------------------------------------------------------ params
    def _param(self, k0: int, end: int) -> None:
        t = self.t
        k = k0 + 1
        name = None
        if k < end and t[k] not in (":", "default"):
            name = self._name(k, end, "param")
            k += 1
        default = None
        if k < end and t[k] == "default":
            if k + 1 >= end or not is_word(t[k + 1]):
                raise self._expected(k + 1, "a value after `default`", f"param `{name}`")
            default = value(t[k + 1])
            k += 2
        if name is None:
            self._several(k0, k, end, default)
            return
        self._note(name, k0, end, k0 + 1)
        if default is not None:
            self.defaults[name] = default
        if k < end and t[k] == ":=":
            k += 1
        elif k < end and t[k] not in (":", "(", "["):
            raise self._expected(k, "`:=` or a table", f"param `{name}`")
        arity = self.schema.dims.get(name)
        if k == end:  # `param p default 0;`: every entry the default
            if default is None:
                raise self.tk.error(f"param `{name}` has no entries", k0 + 1)
            if arity == 0 and name not in self.values:
                self.values[name] = default
            elif arity != 0:
                self._node(name, k0 + 1)
        elif arity == 0 or (arity is None and end - k == 1):
            self._scalar(name, k, end)
        else:
            self._entries(name, k, end, arity)

    def _scalar(self, name: str, k: int, end: int) -> None:
        t = self.t
        if end - k != 1 or not is_word(t[k]) or t[k] == MISSING:
            at = k + 1 if end - k > 1 else k
            raise self.tk.error(f"param `{name}` is one value; expected one value, got "
                                f"`{t[at]}`" if t[at] != ";" else f"param `{name}` has no value",
                                at)
        if name in self.values:
            raise self.tk.error(f"param `{name}` is given twice", k)
        self._number(name, t[k], k, [])
        self.values[name] = value(t[k])

    def _entries(self, name: str, k: int, end: int, arity: int | None) -> None:
        """A param's entries: lists, tables and the slices `[...]` and `(tr)` before them."""
        t = self.t
        node = self._node(name, k)
        template, tr = None, False
        while k < end:
            if t[k] == ",":
                k += 1
            elif t[k] == "[":
                close = self._close(k, end, "]")
                parts = self._words(k + 1, close, f"param `{name}`", star=True)
                if arity is not None and len(parts) != arity:
                    raise self.tk.error(f"param `{name}` has {arity} subscripts, this slice "
                                        f"{len(parts)}", k)
                arity = len(parts)
                template = [None if t[j] == "*" else element(t[j]) for j in parts]
                k = close + 1
            elif t[k] == "(":
                tr, k = self._tr(k, end)
                if not tr:
                    raise self.tk.error(f"param `{name}`: unexpected `(`", k)
            elif t[k] == ":":
                k = self.table(name, node, k, end, template or [None] * (arity or 2), tr)
                tr = False
            else:
                stop = self._stop(k, end, "[", ":", "(")
                if arity is None and template is None:
                    arity = self._guess_arity(list(range(k, stop)), 1)
                self.entry_list(name, node, k, stop, template or [None] * arity)
                k = stop

    def _several(self, k0: int, k: int, end: int, default) -> None:
        """`param: A B := ...` and `param: SET: A B := ...`: several params (and the set of
        their subscripts) in one list, one value each per entry."""
        t = self.t
        if k >= end or t[k] != ":":
            raise self._expected(k, "a param's name or `:`", "param")
        names, k = self._names_until(k + 1, end)
        set_name = None
        if t[k] == ":":
            if len(names) != 1:
                raise self.tk.error("`param: SET: ...` names one set before the second `:`", k)
            set_name = t[names[0]]
            self._note(set_name, k0, end, names[0])
            names, k = self._names_until(k + 1, end)
            if t[k] != ":=":
                raise self._expected(k, "`:=`", "param")
        if not names:
            raise self.tk.error("`param:` names no params", k)
        params = [t[j] for j in names]
        for param, j in zip(params, names, strict=True):
            self._note(param, k0, end, j)
            if default is not None:
                self.defaults[param] = default
        self.several_list(params, set_name, k + 1, end)

    def _names_until(self, k: int, end: int) -> tuple[list[int], int]:
        """Names up to the next `:=` or `:` (token indices), and where that is."""
        t = self.t
        names = []
        while k < end and t[k] not in (":=", ":"):
            if t[k] != ",":
                if not is_name(t[k]):
                    raise self._expected(k, "a name", "param")
                names.append(k)
            k += 1
        if k >= end:
            raise self.tk.error("the param names are not followed by `:=`", k)
        return names, k
