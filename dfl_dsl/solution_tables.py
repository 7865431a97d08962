"""A solution as tables: one per variable (its index as key columns, its values and reduced
costs) and one per constraint (its index, its duals). The keyed JSON is nested from these
tables and `--output` .npz/.csv/.parquet writes them; both work on whole columns — a key
column is a small vocabulary of distinct elements plus one integer code per entry, so a
million entries never become a million Python objects before they are written."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from .evaluate.elements import element_of, is_string_key
from .evaluate.frame import Column, Frame

RESERVED = ("name", "value", "reduced_cost", "dual")  # the tables' non-key columns
NONZERO = 1e-9  # |value| above this is "nonzero" (the terminal table and --nonzeros)


@dataclass
class KeyColumn:
    """One index position of a table: entry i has the element `vocab[codes[i]]`. `axis`: a
    numpy-style shape axis (its keys are positions; JSON nests it as lists, not objects)."""

    name: str
    vocab: np.ndarray  # int64 element keys, distinct
    codes: np.ndarray  # int64, one per entry
    axis: bool = False

    def take(self, rows: np.ndarray) -> KeyColumn:
        return replace(self, codes=self.codes[rows])

    @property
    def integer(self) -> bool:
        """Every element is an integer (none is a string)."""
        return not bool(np.any(is_string_key(self.vocab)))

    def texts(self) -> list[str]:
        """The text of each vocabulary element (a string element, or an integer's digits)."""
        return [str(element_of(k)) for k in self.vocab.tolist()]

    def column(self) -> np.ndarray:
        """The entries' elements as a plain array: int64 when every element is an integer,
        else str."""
        if self.integer:
            return self.vocab[self.codes]
        return np.array(self.texts(), dtype=str)[self.codes]


@dataclass
class Table:
    """A variable's or constraint's entries: key columns, and float columns (`value` and
    `reduced_cost` for a variable, `dual` for a constraint) with one number per entry.
    `grouped`: entries sharing a key prefix are contiguous (dense, row-major layouts)."""

    name: str
    keys: list[KeyColumn]
    columns: dict[str, np.ndarray]
    shape: tuple[int, ...] | None = None  # numpy-style variables: the array's shape
    grouped: bool = True

    @property
    def n(self) -> int:
        return len(next(iter(self.columns.values())))

    def take(self, rows: np.ndarray) -> Table:
        return Table(self.name, [k.take(rows) for k in self.keys],
                     {c: v[rows] for c, v in self.columns.items()}, None, self.grouped)

    def nonzero(self, column: str) -> Table:
        """Only the entries whose `column` is nonzero; a numpy-style index is then keyed by
        positions (a nested list can't skip entries)."""
        out = self.take(np.flatnonzero(np.abs(self.columns[column]) > NONZERO))
        out.keys = [replace(k, axis=False) for k in out.keys]
        return out


def variable_table(entity, values: np.ndarray, reduced: np.ndarray | None = None) -> Table:
    """The table of a bound variable (`values`, `reduced`: its entries, in entry order)."""
    domain = entity.domain
    names = [name for group in domain.names for name in group]
    keys = [key_column(domain.frame.get(name), name, entity.shape_style) for name in names]
    columns = {"value": _numbers(values)}
    if reduced is not None:
        columns["reduced_cost"] = _numbers(reduced)
    shape = entity.shape if entity.shape_style else None
    grouped = domain.dense and all(c.dim == 1 for c in domain.components)  # row-major
    return Table(entity.name, _distinct_names(keys), columns, shape, grouped)


def constraint_table(name: str, frame: Frame, dummies: list[str], shape: tuple[int, ...],
                     duals: np.ndarray) -> Table:
    """The table of a constraint's duals: its frame's rows (one per binding of its index's
    dummies) times the positions of a vector-valued body (`shape`)."""
    per = math.prod(shape)
    keys = [key_column(frame.get(d), d, False) for d in dummies]
    keys = [replace(k, codes=np.repeat(k.codes, per)) for k in keys]
    if shape:
        flat = np.arange(frame.n * per) % per
        keys += [KeyColumn(f"axis{a}", np.arange(size, dtype=np.int64), pos, True)
                 for a, (size, pos) in enumerate(zip(shape, np.unravel_index(flat, shape),
                                                     strict=True))]
    return Table(name, _distinct_names(keys), {"dual": _numbers(duals)},
                 grouped=len(dummies) <= 1)


def _numbers(values) -> np.ndarray:
    """float64, with -0.0 (a solver's rounding) read as 0.0 in every output."""
    return np.asarray(values, dtype=float) + 0.0


def key_column(column: Column, dummy: str, axis: bool) -> KeyColumn:
    """A frame column as vocabulary + codes. A column that points into a set (a dense index)
    gets its codes from its positions there: only the set's elements are made distinct."""
    if column.pos is not None and column.origin is not None:
        vocab, inverse = np.unique(column.origin.keys[:, column.comp], return_inverse=True)
        codes = inverse.astype(np.int64)[column.pos]
    else:
        vocab, codes = np.unique(column.keys, return_inverse=True)
    return KeyColumn(_column_name(column, dummy), vocab.astype(np.int64),
                     codes.astype(np.int64, copy=False), axis)


def _column_name(column: Column, dummy: str) -> str:
    """The set's name for a one-element set (so a variable over ORIG and a constraint over
    ORIG share a column), else the dummy the user wrote, else `SET_k` for the k-th component
    of a tuple set; `axis0`, ... for a numpy-style shape."""
    origin = column.origin
    set_name = origin.name if origin is not None else None
    if set_name and origin.dim == 1:
        return set_name
    if not dummy.startswith("#"):
        return dummy
    if dummy.startswith("#axis"):
        return dummy[1:]
    return f"{set_name}_{column.comp + 1}" if set_name else f"key{column.comp + 1}"


def _distinct_names(keys: list[KeyColumn]) -> list[KeyColumn]:
    """`S`, `S_2`, ... where an index repeats a set (`x{NODES, NODES}`); a key named like a
    value column (`value`, ...) is `value_2`."""
    seen: dict[str, int] = dict.fromkeys(RESERVED, 1)
    out = []
    for key in keys:
        count = seen[key.name] = seen.get(key.name, 0) + 1
        out.append(key if count == 1 else replace(key, name=f"{key.name}_{count}"))
    return out
