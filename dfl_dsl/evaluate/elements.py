"""Set elements as int64 keys, and vectorized lookups of keys in sets.

An integer element is its own key; a string element is interned to `STRING_BASE + code`. Every
set, dummy and element-valued param is then an int64 array, so joins, filters and lookups are
numpy operations, never Python loops over elements.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

STRING_BASE = np.int64(1 << 62)
# integer elements lie strictly between -2^62 and 2^62; no set holds NO_KEY (a number that
# can't be an element — 2.5, 1e300, nan — looked up in a set is in none)
ELEMENT_RANGE = "integers between -2^62 and 2^62"
NO_KEY = np.int64(-(1 << 63))
_codes: dict[str, int] = {}
_strings: list[str] = []


def intern(text: str) -> int:
    code = _codes.get(text)
    if code is None:
        code = len(_strings)
        _codes[text] = code
        _strings.append(text)
    return int(STRING_BASE) + code


def intern_all(texts: list[str]) -> np.ndarray:
    """`intern` of each text, in bulk: the dict and list work runs in C (map, dict.update),
    not once per text in Python. The texts not interned yet take consecutive codes in one
    update and need no lookup when they are distinct (a set's names, as a rule); one repeated
    among them keeps its last code (its first stays in `_strings`, unused)."""
    found = list(map(_codes.get, texts))
    if None not in found:
        return np.array(found, dtype=np.int64) + STRING_BASE
    new = texts if found.count(None) == len(texts) else [
        t for t, code in zip(texts, found, strict=True) if code is None]
    start, known = len(_strings), len(_codes)
    _strings.extend(new)
    _codes.update(zip(new, range(start, start + len(new)), strict=True))
    if len(_codes) != known + len(new):  # a new text repeats: look every one up
        return np.array(list(map(_codes.__getitem__, texts)), dtype=np.int64) + STRING_BASE
    if new is texts:
        return np.arange(start, start + len(texts), dtype=np.int64) + STRING_BASE
    codes = np.array([-1 if code is None else code for code in found], dtype=np.int64)
    codes[codes < 0] = np.arange(start, start + len(new))
    return codes + STRING_BASE


def key_of(value) -> int:
    """The key of one element; raises ValueError for what can't be an element."""
    if isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{value!r} can't be a set element")
    if isinstance(value, str):
        return intern(value)
    if isinstance(value, (int, np.integer)):
        if abs(int(value)) >= int(STRING_BASE):
            raise ValueError(f"integer element {shown_int(int(value))} is too large")
        return int(value)
    if isinstance(value, (float, np.floating)) and float(value).is_integer():
        if abs(value) >= float(STRING_BASE):
            raise ValueError(f"integer element {value:g} is too large")
        return int(value)
    raise ValueError(f"{value!r} can't be a set element (use an integer or a string)")


def keys_of(values) -> np.ndarray:
    """Keys for a sequence of elements (fast path for integer arrays)."""
    if isinstance(values, np.ndarray):
        arr = values
    else:
        types = set(map(type, values))
        if types == {str}:  # names: no detour through a numpy str array
            return intern_all(values)
        # numpy would read True as 1
        arr = None if {bool, np.bool_} & types else np.asarray(values)
    if arr is not None and arr.dtype.kind in "iu" and arr.ndim == 1:
        if len(arr) and np.abs(arr).max() >= STRING_BASE:
            raise ValueError(f"integer element {shown_int(int(arr[np.abs(arr).argmax()]))} is "
                             "too large")
        return arr.astype(np.int64)
    return np.fromiter((key_of(v) for v in values), dtype=np.int64, count=len(values))


def shown_int(value: int) -> str:
    """An integer for a message: in full up to 24 digits, else its size (str() of one past
    4300 digits raises)."""
    if abs(value) < 10**24:
        return str(value)
    return f"{'-' if value < 0 else ''}1e{int(abs(value).bit_length() * 0.30103)} (about)"


def number_keys(values: np.ndarray) -> np.ndarray:
    """Keys of numbers used as elements (a subscript, a membership test): an integer within
    the element range is its own key, any other number `NO_KEY` (an unchecked cast would
    truncate 2.5 to 2 and wrap 1e19 around int64)."""
    values = np.asarray(values)
    if values.dtype.kind in "iu":
        big = np.abs(values.astype(float)) >= float(STRING_BASE)
        return np.where(big, NO_KEY, values.astype(np.int64))
    with np.errstate(invalid="ignore"):
        ok = (np.abs(values) < float(STRING_BASE)) & (values == np.round(values))
    return np.where(ok, np.where(ok, values, 0).astype(np.int64), NO_KEY)


def whole_keys(values: np.ndarray) -> np.ndarray | None:
    """`number_keys` of numbers that must all be elements (a set literal, a range's bounds),
    or None when one is not an integer within the element range."""
    keys = number_keys(values)
    return None if np.any(keys == NO_KEY) else keys


def element_of(key: int) -> int | str:
    key = int(key)
    if key >= int(STRING_BASE):
        return _strings[key - int(STRING_BASE)]
    return key


def is_string_key(keys: np.ndarray) -> np.ndarray:
    return keys >= STRING_BASE


def combine_columns(*tables: np.ndarray) -> list[np.ndarray]:
    """Encode rows of several (n_i, k) key tables as single int64 codes with a shared radix,
    so that tuples compare equal iff their codes do."""
    if tables[0].shape[1] == 1:
        return [t[:, 0] for t in tables]
    sizes = [len(t) for t in tables]
    stacked = np.concatenate(tables, axis=0)
    code = np.zeros(len(stacked), dtype=np.int64)
    for c in range(stacked.shape[1]):
        uniques, rank = np.unique(stacked[:, c], return_inverse=True)
        code = code * np.int64(len(uniques)) + rank.astype(np.int64)
    return np.split(code, np.cumsum(sizes)[:-1])


@dataclass
class SetValue:
    """A bound set: its elements as a key table (n × dim), in the order the data gave."""

    keys: np.ndarray
    name: str | None = None
    circular: bool = False  # a `circular` set: `next` and `prev` wrap around
    _sorted: tuple[np.ndarray, np.ndarray] | None = field(default=None, repr=False)
    _range_start: int | None | bool = field(default=False, repr=False)

    def __post_init__(self) -> None:
        if self.keys.ndim == 1:
            self.keys = self.keys.reshape(-1, 1)
        self.keys = np.ascontiguousarray(self.keys, dtype=np.int64)

    @property
    def n(self) -> int:
        return self.keys.shape[0]

    @property
    def dim(self) -> int:
        return self.keys.shape[1]

    @property
    def integer(self) -> bool:
        return not bool(np.any(is_string_key(self.keys)))

    @property
    def range_start(self) -> int | None:
        """`lo` when the set is exactly lo, lo+1, ..., lo+n-1 (positions are then arithmetic)."""
        if self._range_start is False:
            start = None
            if self.dim == 1 and self.n and self.integer:
                first = int(self.keys[0, 0])
                if np.array_equal(self.keys[:, 0], np.arange(first, first + self.n)):
                    start = first
            self._range_start = start
        return self._range_start  # type: ignore[return-value]

    def elements(self) -> list:
        if self.dim == 1:
            return [element_of(k) for k in self.keys[:, 0]]
        return [tuple(element_of(k) for k in row) for row in self.keys]

    def position(self, query: np.ndarray) -> np.ndarray:
        """Positions of the key tuples `query` (m × dim, or m for dim 1); -1 where absent."""
        query = np.asarray(query, dtype=np.int64)
        if query.ndim == 1:
            query = query.reshape(-1, 1)
        start = self.range_start
        if start is not None:
            pos = query[:, 0] - start
            return np.where((pos >= 0) & (pos < self.n), pos, -1)
        if self.dim == 1:
            if self._sorted is None:
                order = np.argsort(self.keys[:, 0], kind="stable")
                self._sorted = (order, self.keys[order, 0])
            order, ordered = self._sorted
            return _search(order, ordered, query[:, 0])
        mine, theirs = combine_columns(self.keys, query)
        order = np.argsort(mine, kind="stable")
        return _search(order, mine[order], theirs)

    def duplicates(self) -> np.ndarray:
        """Row indices of elements that repeat an earlier one."""
        codes = combine_columns(self.keys)[0]
        _, first = np.unique(codes, return_index=True)
        mask = np.ones(self.n, dtype=bool)
        mask[first] = False
        return np.nonzero(mask)[0]


def _search(order: np.ndarray, ordered: np.ndarray, query: np.ndarray) -> np.ndarray:
    if len(ordered) == 0:
        return np.full(len(query), -1, dtype=np.int64)
    idx = np.searchsorted(ordered, query)
    idx = np.minimum(idx, len(ordered) - 1)
    found = ordered[idx] == query
    return np.where(found, order[idx], -1).astype(np.int64)


def format_key(keys) -> str:
    """`[GARY, FRA]`-style text for an index tuple of keys."""
    if np.ndim(keys) == 0:
        keys = [keys]
    return "[" + ", ".join(str(element_of(k)) for k in keys) + "]"
