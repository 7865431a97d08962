"""The binder's sets: set declarations (plain, computed, indexed `set S{I}`), their `within`
checks, and AMPL's `check` statements, tested once the data they read is bound."""

from __future__ import annotations

import re

import numpy as np

from . import ast
from .data import DataSource, to_set
from .errors import DataError, DflError
from .evaluate.elements import SetValue, format_key, key_of
from .evaluate.entities import Domain
from .evaluate.families import SetFamily, as_family
from .evaluate.frame import Frame


class SetBinding:
    """Mixed into the binder (`bind._Binder`)."""

    def _SetDecl(self, stmt: ast.SetDecl) -> None:
        raw = self.source.values.get(stmt.name)
        if stmt.index is not None:
            self._family(stmt, raw)
            return
        root = Frame.root()
        if stmt.value is not None:
            if raw is not None:
                raise self._computed_in_model(stmt)
            the_set = self.evaluator.set_of(stmt.value, root)
            if not isinstance(the_set, SetValue):
                raise DflError("a set can't depend on dummies here", stmt.value.pos)
        elif raw is None and stmt.default is not None:
            the_set = self.evaluator.set_of(stmt.default, root)
        else:
            if raw is None:
                raise self._missing(stmt, "set")
            the_set = to_set(self.source, stmt.name, raw, self.model.symbols[stmt.name].dim or 1)
        the_set = SetValue(the_set.keys, stmt.name, circular=stmt.order == "circular")
        if stmt.within is not None:
            self._within(stmt, the_set, root, lambda row: "")
        self.ctx.sets[stmt.name] = the_set

    def _computed_in_model(self, stmt: ast.SetDecl) -> DataError:
        return self.source.error(
            f"set `{stmt.name}` is computed in the model (`=`); remove it from the data",
            stmt.name)

    def _family(self, stmt: ast.SetDecl, raw) -> None:
        """`set S{I}`: one set per entry of I, from the data or computed per entry."""
        domain = self.evaluator.domain(stmt.index)
        dim = self.model.symbols[stmt.name].dim or 1
        if stmt.value is not None:
            if raw is not None:
                raise self._computed_in_model(stmt)
            keys, starts = as_family(self.evaluator.set_of(stmt.value, domain.frame), domain.n)
        elif raw is None and stmt.default is None:
            raise self._missing(stmt, "set")
        else:
            given = np.zeros(domain.n, dtype=bool)
            keys, starts = (family_from_data(self.source, stmt.name, raw, domain, dim, given)
                            if raw is not None else (np.zeros((0, dim), np.int64),
                                                     np.zeros(domain.n + 1, np.int64)))
            if stmt.default is not None and not given.all():
                fill = as_family(self.evaluator.set_of(stmt.default, domain.frame), domain.n)
                keys, starts = merge_families((keys, starts), fill, ~given)
        family = SetFamily(stmt.name, domain, keys, starts, stmt.order == "circular")
        repeats = family.index.duplicates()
        if len(repeats):  # (one pass over all the sets: (entry, member) pairs that repeat)
            row = int(repeats[0])
            element = SetValue(keys[row : row + 1]).elements()[0]
            raise self.source.error(f"set `{stmt.name}{family.owner(row)}` lists {element!r} "
                                    "twice", stmt.name)
        if stmt.within is not None:
            self._within(stmt, family.all_members(), domain.frame, family.owner)
        self.ctx.families[stmt.name] = family

    def _within(self, stmt: ast.SetDecl, the_set: SetValue, frame: Frame, owner) -> None:
        """Every element inside the `within` superset. A product `A * B` is checked column by
        column, never built (NODES * NODES of a 70x70 grid has 24M pairs)."""
        at = Frame.root() if stmt.index is None else frame
        parents = [self.evaluator.set_of(f, at) for f in self._factors(stmt.within, at)]
        if not all(isinstance(p, SetValue) for p in parents):
            raise DflError("a `within` set that changes with the index is not supported",
                           stmt.within.pos)
        width = sum(p.dim for p in parents)
        if width != the_set.dim:
            raise self.source.error(
                f"set `{stmt.name}` holds {the_set.dim}-tuples but is declared within a set "
                f"of {width}-tuples", stmt.name)
        outside = np.zeros(the_set.n, dtype=bool)
        at = 0
        for parent in parents:
            outside |= parent.position(the_set.keys[:, at : at + parent.dim]) < 0
            at += parent.dim
        if outside.any():
            row = int(np.nonzero(outside)[0][0])
            bad = the_set.elements()[row]
            raise self.source.error(
                f"set `{stmt.name}{owner(row)}`: element {bad!r} is not within the declared "
                "superset", stmt.name, at=bad,
                hint=text_or_number(bad if isinstance(bad, tuple) else (bad,), parents))

    def _factors(self, node: ast.Expr, frame: Frame) -> list[ast.Expr]:
        """The factors of a `within` product: `A * B`, `A cross B`, AMPL's `{A, B}`."""
        factors = []
        for factor in product_factors(node):
            if isinstance(factor, ast.SetLiteral) and factor.elements and (
                    self.evaluator.value(factor.elements[0], frame).kind == "set"):
                factors += [f for e in factor.elements for f in self._factors(e, frame)]
            else:
                factors.append(factor)
        return factors

    def _Check(self, stmt: ast.Check) -> None:
        """A failed check is a data error at the check, naming the index where it fails."""
        root = Frame.root()
        frame = self.evaluator.index(stmt.index, root) if stmt.index is not None else root
        failed = ~self.evaluator.mask(stmt.cond, frame)
        if not failed.any():
            return
        row = int(np.nonzero(failed)[0][0])
        names = frame.names()  # the index's dummies (and its unnamed components)
        where = format_key([frame.get(n).keys[row] for n in names]) if names else ""
        more = int(failed.sum()) - 1
        pos = stmt.cond.pos  # the condition as written, when it fits on one line
        line = self.model.source.splitlines()[pos.line - 1] if pos.line == pos.end_line else ""
        cond = line[pos.column - 1 : pos.end_column - 1]
        raise DataError(
            f"{stmt.title} fails" + (f" for {where}" if where else "")
            + (f" ({more} more too)" if more else "") + (f": `{cond}`" if cond else ""),
            stmt.pos, hint="the data breaks this condition",
            filename=self.model.filename, source=self.model.source)


def family_from_data(source: DataSource, name: str, raw, domain: Domain, dim: int,
                     given: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(keys, starts) of an indexed set from data: an object keyed by the elements of its
    index (nested, one level per index position), each value a list of members; an entry
    the data leaves out is an empty set (`given` marks the entries the data has)."""
    arity = domain.arity
    if not isinstance(raw, dict):
        raise source.error(f"indexed set `{name}` takes an object keyed by the elements of its "
                           "index, each holding a list of members", name,
                           hint='e.g. {"a": [1, 2], "b": []}')
    entries = SetValue(domain.keys())
    members: list[list[np.ndarray]] = [[] for _ in range(domain.n)]
    for path, leaf in _leaves(source, name, raw, arity, []):
        keys = np.array([[_element_key(source, name, e, entries, k) for k, e in
                          enumerate(path)]], dtype=np.int64)
        p = int(entries.position(keys)[0])
        label = format_key(keys[0])
        if p < 0:
            raise source.error(f"indexed set `{name}`: {label} is not in its index set", name)
        given[p] = True
        try:
            members[p].append(to_set(source, name, leaf, dim).keys)
        except DataError as exc:
            exc.message = exc.message.replace(f"set `{name}`", f"set `{name}{label}`", 1)
            raise
    counts = np.array([sum(len(m) for m in ms) for ms in members], dtype=np.int64)
    starts = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    flat = [m for ms in members for m in ms]
    keys = np.concatenate(flat) if flat else np.zeros((0, dim), dtype=np.int64)
    return keys, starts


def _leaves(source, name, raw, depth: int, path: list):
    if depth == 0:
        yield path, raw
        return
    if not isinstance(raw, dict):
        raise source.error(f"indexed set `{name}`: expected an object keyed by elements at "
                           f"{format_key(path) if path else 'the top'}", name)
    for key, value in raw.items():
        yield from _leaves(source, name, value, depth - 1, path + [key])


def _element_key(source, name, element, entries: SetValue, column: int) -> int:
    """A JSON object key as an element of the index: "3" is 3 where the index holds 3."""
    try:
        key = key_of(element)
    except ValueError as exc:
        raise source.error(f"indexed set `{name}`: {exc}", name) from None
    if isinstance(element, str) and re.fullmatch(r"-?\d+", element.strip()):
        if not np.any(entries.keys[:, column] == key):
            return int(element)
    return key


def text_or_number(values: tuple, parents: list) -> str | None:
    """A hint when an element missed its set only by being text, "1", where the set holds the
    number 1 (or the other way round): JSON keys are always text, so the two get mixed up."""
    for value in values:
        twin = None
        if isinstance(value, str) and re.fullmatch(r"-?\d+", value.strip()):
            twin = int(value)
        elif isinstance(value, int):
            twin = str(value)
        if twin is None:
            continue
        for parent in parents:
            if isinstance(parent, SetValue) and parent.dim == 1 and (
                parent.position(np.array([[key_of(twin)]])) >= 0
            ).all():
                if isinstance(value, str):
                    return (f'"{value}" is text, but the set holds the number {twin}: write it '
                            "without quotes")
                return f'{value} is a number, but the set holds the text "{twin}": quote it'
    return None


def product_factors(node: ast.Expr) -> list[ast.Expr]:
    """`A * B * C` (or `A cross B cross C`) -> [A, B, C]; anything else is one factor."""
    if isinstance(node, ast.BinOp) and node.op in ("*", "cross"):
        return product_factors(node.left) + product_factors(node.right)
    return [node]


def merge_families(data: tuple[np.ndarray, np.ndarray], fill: tuple[np.ndarray, np.ndarray],
                   use_fill: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Entry p's members from `fill` where `use_fill[p]` (the `default`), else from `data`."""
    counts = np.where(use_fill, np.diff(fill[1]), np.diff(data[1]))
    begins = np.where(use_fill, fill[1][:-1], data[1][:-1])
    source = np.repeat(use_fill, counts)
    offsets = np.arange(int(counts.sum())) - np.repeat(np.cumsum(counts) - counts, counts)
    rows = np.repeat(begins, counts) + offsets
    dim = data[0].shape[1]
    keys = np.zeros((len(rows), dim), dtype=np.int64)
    keys[source] = fill[0][rows[source]]
    keys[~source] = data[0][rows[~source]]
    return keys, np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
