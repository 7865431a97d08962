"""Frames: the rows over which an indexed expression is evaluated at once.

A frame is a table: one row per binding of its dummies, one int64 key column per dummy. An
index `{i in S, (j, v) in ARCS, t in a .. b : FILTER}` extends its parent frame by joins:
a cross join for a fixed set, a ragged expansion for a range whose bounds depend on dummies,
and a sort-merge join (group by) for a tuple pattern whose components are already bound. Child
rows stay grouped by parent row, so a reduction is a segment sum over contiguous rows.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .digits import Digit
from .elements import SetValue, combine_columns
from .sizes import check_count

_bindings = itertools.count(1)


@dataclass
class Column:
    """A dummy's keys, and where they came from (for direct positions into that set).

    A column that knows its origin and positions keeps no keys of its own: they are
    `origin.keys[pos, comp]`, gathered on first use. Joins then write one array per dummy
    instead of two, and the commonest use of a dummy — positions into a param or a variable
    indexed over the same set — never gathers the keys at all."""

    _keys: np.ndarray | None
    origin: SetValue | None = None
    _pos: np.ndarray | None = None  # row's position in `origin`
    comp: int = 0  # which component of the origin's tuples
    binding: int = 0  # same value for the components bound together by one pattern
    digit: Digit | None = None  # the positions as a digit of the row number (a cross join's)

    @property
    def pos(self) -> np.ndarray | None:
        if self._pos is None and self.digit is not None:
            self._pos = self.digit.array()
        return self._pos

    @property
    def keys(self) -> np.ndarray:
        if self._keys is None:
            self._keys = self.origin.keys[self.pos, self.comp]
        return self._keys

    @property
    def n(self) -> int:
        if self._keys is not None:
            return len(self._keys)
        return self.digit.n if self.digit is not None else len(self._pos)

    def take(self, idx: np.ndarray | Digit) -> Column:
        if self.digit is not None and isinstance(idx, Digit):
            taken = self.digit.at(idx)
            if taken is not None:
                return Column(None, self.origin, None, self.comp, self.binding, taken)
        if isinstance(idx, Digit):
            idx = idx.array()
        if self.pos is not None:
            return Column(None, self.origin, self.pos[idx], self.comp, self.binding)
        return Column(self._keys[idx])

    def repeat(self, times: int) -> Column:
        """`take(np.repeat(arange(n), times))` without the index array (a cross join's rows)."""
        if self.digit is not None:
            return Column(None, self.origin, None, self.comp, self.binding,
                          self.digit.repeat(times))
        if self.pos is not None:
            return Column(None, self.origin, np.repeat(self.pos, times), self.comp, self.binding)
        return Column(np.repeat(self._keys, times))


@dataclass
class RowRanges:
    """A range `lo .. hi` whose bounds differ per frame row."""

    lo: np.ndarray
    hi: np.ndarray


class Frame:
    def __init__(
        self,
        n: int,
        columns: dict[str, Column] | None = None,
        parent: Frame | None = None,
        parent_idx: np.ndarray | Digit | None = None,
    ) -> None:
        self.n = n
        self.columns = columns or {}
        self.parent = parent
        self._parent_rows = parent_idx  # (a Digit until an array is asked for)
        self._inherited: dict[str, Column] = {}
        self.memo: dict = {}  # per-frame results worth reusing (entry positions of lookups)

    @staticmethod
    def root() -> Frame:
        return Frame(1)

    @property
    def parent_idx(self) -> np.ndarray | None:
        """Each row's parent row."""
        if isinstance(self._parent_rows, Digit):
            self._parent_rows = self._parent_rows.array()
        return self._parent_rows

    def get(self, name: str) -> Column | None:
        column = self.columns.get(name) or self._inherited.get(name)
        if column is not None:
            return column
        if self.parent is None:
            return None
        outer = self.parent.get(name)
        if outer is None:
            return None
        column = outer.take(self._parent_rows)
        self._inherited[name] = column
        return column

    def names(self) -> list[str]:
        outer = self.parent.names() if self.parent is not None else []
        return outer + [n for n in self.columns if n not in outer]

    def starts(self) -> np.ndarray:
        """Row offsets of each parent row's group (length parent.n + 1)."""
        assert self.parent is not None and self._parent_rows is not None
        rows = self._parent_rows
        if isinstance(rows, Digit) and rows.size == self.parent.n and rows.n == (
                rows.inner * rows.size):
            return np.arange(0, self.n + 1, rows.inner, dtype=np.int64)  # equal groups, in order
        return np.searchsorted(self.parent_idx, np.arange(self.parent.n + 1)).astype(np.int64)

    def take(self, idx: np.ndarray) -> Frame:
        columns = {k: c.take(idx) for k, c in self.columns.items()}
        parent_idx = self.parent_idx[idx] if self.parent_idx is not None else None
        return Frame(len(idx), columns, self.parent, parent_idx)


@dataclass
class RowSets:
    """A set that differs per frame row (`S[i]` of an indexed set): row r's members are
    `keys[begin[r]:end[r]]` (the rows of one table shared by all the sets)."""

    keys: np.ndarray  # (m, dim)
    begin: np.ndarray  # (n,)
    end: np.ndarray  # (n,)
    # for the sets of an indexed set: each row's entry, and the (entry, member...) table of
    # the whole family, so that a membership test is one lookup per row
    owner: np.ndarray | None = None
    index: SetValue | None = None
    circular: bool = False  # `next`/`prev` wrap around

    @property
    def counts(self) -> np.ndarray:
        return self.end - self.begin

    @property
    def dim(self) -> int:
        return self.keys.shape[1]

    def members(self) -> tuple[np.ndarray, np.ndarray]:
        """Every member of every row, row by row: (row of each, key table)."""
        counts = self.counts
        rows = np.repeat(np.arange(len(counts), dtype=np.int64), counts)
        offsets = np.arange(len(rows), dtype=np.int64) - np.repeat(np.cumsum(counts) - counts,
                                                                   counts)
        return rows, self.keys[np.repeat(self.begin, counts) + offsets]

    def contains(self, keys: np.ndarray) -> np.ndarray:
        """Whether row r's set holds `keys[r]` (one key tuple per row, (n, dim))."""
        return self.locate(keys) >= 0

    def locate(self, keys: np.ndarray) -> np.ndarray:
        """Where `keys[r]` sits in row r's set, from 0 (-1: not in it)."""
        if self.index is not None:  # the index's rows are the table's: row - begin
            at = self.index.position(np.concatenate([self.owner[:, None], keys], axis=1))
            return np.where(at >= 0, at - self.begin, -1)
        rows, members = self.members()
        mine = np.concatenate([rows[:, None], members], axis=1)
        theirs = np.concatenate([np.arange(len(keys), dtype=np.int64)[:, None], keys], axis=1)
        at = SetValue(mine).position(theirs)  # members() lists row r's from its offset on
        offsets = np.cumsum(self.counts) - self.counts
        return np.where(at >= 0, at - offsets, -1)

    @staticmethod
    def of_rows(rows: np.ndarray, keys: np.ndarray, n: int) -> RowSets:
        """The sets whose members are `keys[t]` in row `rows[t]` (`rows` ascending)."""
        begin = np.searchsorted(rows, np.arange(n), side="left")
        end = np.searchsorted(rows, np.arange(n), side="right")
        keys = np.asarray(keys, dtype=np.int64)  # (one column where 1-d; none may be left)
        return RowSets(keys.reshape(-1, 1) if keys.ndim == 1 else keys, begin, end)


SetEvaluator = Callable[[object, Frame], "SetValue | RowRanges | RowSets"]
MaskEvaluator = Callable[[object, Frame], np.ndarray]
# a tuple component's keys per frame row when it matches (None: a fresh dummy)
MatchEvaluator = Callable[[object, Frame], "np.ndarray | None"]


def join(parent: Frame, items, filter_, eval_set: SetEvaluator, eval_mask: MaskEvaluator,
         eval_match: MatchEvaluator | None = None, push=None) -> Frame:
    """The child frame of `parent` for an index's items and filter. `push` (an
    `evaluate.pushdown.Pushdown`) tells what the filter says a fresh dummy equals or belongs
    to: the join then matches instead of crossing every row with the item's set."""
    frame = Frame(parent.n, {}, parent, Digit.rows(parent.n))
    for at, item in enumerate(items):
        the_set = eval_set(item.set, frame)
        names = item.names or ("",) * _width(the_set)
        names = tuple(name or f"#{id(item)}:{k}" for k, name in enumerate(names))
        fixed = _fixed(frame, item, names, eval_match)
        pending = frozenset() if not push else frozenset(
            n for it in items[at:] for n in it.names if n and frame.get(n) is None)
        pushed = _pushed(frame, names, fixed, push, pending) \
            if push and isinstance(the_set, SetValue) else {}
        match = push.member(names[0], frame, pending) if (
            push and not fixed and not pushed and isinstance(the_set, SetValue)
            and the_set.dim == 1 and item.names) else None
        if isinstance(the_set, RowRanges):
            frame = _expand_ranges(frame, names[0], the_set, bool(fixed))
        elif isinstance(the_set, RowSets):
            frame = _expand_sets(frame, names, the_set, fixed)
        elif fixed or pushed:
            frame = _join_pattern(frame, names, fixed, the_set, pushed)
        elif match is not None:
            frame = _semi_join(frame, names[0], the_set, match)
        else:
            frame = _cross(frame, names, the_set)
    if filter_ is not None:
        mask = eval_mask(filter_, frame)
        if not mask.all():
            frame = frame.take(np.nonzero(mask)[0])
    return frame


def _fixed(frame: Frame, item, names, eval_match: MatchEvaluator | None) -> dict[int, np.ndarray]:
    """The keys, per frame row, of the components that match rather than bind: names bound
    already (outer dummies) and, in a tuple pattern, params, literals and expressions."""
    fixed: dict[int, np.ndarray] = {}
    for k, name in enumerate(names):
        column = frame.get(name)
        if column is not None:
            fixed[k] = column.keys
        elif item.parts and eval_match is not None:
            keys = eval_match(item.parts[k], frame)
            if keys is not None:
                fixed[k] = keys
    return fixed


def _pushed(frame: Frame, names, fixed: dict[int, np.ndarray], push,
            pending: frozenset) -> dict[int, np.ndarray]:
    """The keys the filter's equalities fix for this item's free components."""
    pushed = {}
    for k, name in enumerate(names):
        if k not in fixed and name not in names[:k]:
            keys = push.equal(name, frame, pending)
            if keys is not None:
                pushed[k] = keys
    return pushed


def _width(the_set) -> int:
    return 1 if isinstance(the_set, (RowRanges, RowSets)) else the_set.dim


def _expand_sets(frame: Frame, names, sets: RowSets, fixed: dict[int, np.ndarray]) -> Frame:
    """`j in S[i]`: each row with the members of its own set (a filter where `j` is bound;
    members whose matched components differ from the row's are left out)."""
    if len(fixed) == len(names):
        keys = np.stack([fixed[k] for k in range(len(names))], axis=1)
        return _extend(frame, np.nonzero(sets.contains(keys))[0], {})
    check_count(int(sets.counts.sum(dtype=float)), "this index")
    rows, members = sets.members()
    keep = np.zeros(len(rows), dtype=bool)
    keep[_alike([n for k, n in enumerate(names) if k not in fixed],
                members[:, [k for k in range(len(names)) if k not in fixed]])] = True
    for k, keys in fixed.items():
        keep &= members[:, k] == keys[rows]
    keep = np.flatnonzero(keep)
    new: dict[str, Column] = {}
    for k, name in enumerate(names):
        if k not in fixed and name not in new:
            new[name] = Column(members[keep, k])
    return _extend(frame, rows[keep], new)


def _extend(frame: Frame, rows: np.ndarray, new: dict[str, Column]) -> Frame:
    columns = {k: c.take(rows) for k, c in frame.columns.items()}
    columns.update(new)
    return Frame(len(rows), columns, frame.parent, frame.parent_idx[rows])


def _alike(names, keys: np.ndarray) -> np.ndarray:
    """Rows of a set whose components bound to the same new name agree: `(v, v) in ARCS` is
    the self-loops."""
    keep = np.ones(len(keys), dtype=bool)
    first: dict[str, int] = {}
    for k, name in enumerate(names):
        if name in first:
            keep &= keys[:, first[name]] == keys[:, k]
        else:
            first[name] = k
    return np.nonzero(keep)[0].astype(np.int64)


def _columns(the_set: SetValue, names, at: np.ndarray | Digit, skip=()) -> dict[str, Column]:
    """One column per new name (its first component), pointing back at `the_set` (keys
    gathered only if asked for); `at` is each row's position there, one array (or digit) for
    all the columns."""
    binding = next(_bindings)
    pos, digit = (None, at) if isinstance(at, Digit) else (at, None)
    new: dict[str, Column] = {}
    for k, name in enumerate(names):
        if k not in skip and name not in new:
            new[name] = Column(None, the_set, pos, k, binding, digit)
    return new


def _cross(frame: Frame, names, the_set: SetValue) -> Frame:
    """Every frame row with every element of the set: the old columns repeat row by row, the
    new ones tile. With every element, in order, the new positions are a digit: no array."""
    candidates = _alike(names, the_set.keys)
    times = len(candidates)
    check_count(frame.n * times, "this index")
    columns = {k: c.repeat(times) for k, c in frame.columns.items()}
    every = times == the_set.n and frame.n * times
    columns.update(_columns(the_set, names, Digit.rows(times).tile(frame.n) if every
                            else np.tile(candidates, frame.n)))
    rows = frame._parent_rows
    rows = rows.repeat(times) if isinstance(rows, Digit) else np.repeat(rows, times)
    return Frame(frame.n * times, columns, frame.parent, rows)


def _expand_ranges(frame: Frame, name: str, ranges: RowRanges, bound: bool) -> Frame:
    lo = np.broadcast_to(ranges.lo, (frame.n,)).astype(np.int64)
    hi = np.broadcast_to(ranges.hi, (frame.n,)).astype(np.int64)
    if bound:  # `t in a .. b` with t already bound: a filter
        keys = frame.get(name).keys
        keep = np.nonzero((keys >= lo) & (keys <= hi))[0]
        return _extend(frame, keep, {})
    counts = np.maximum(hi - lo + 1, 0)
    check_count(int(counts.sum(dtype=float)), "this index")  # (float: no int64 wrap)
    rows = np.repeat(np.arange(frame.n, dtype=np.int64), counts)
    offsets = np.arange(len(rows), dtype=np.int64) - np.repeat(np.cumsum(counts) - counts, counts)
    return _extend(frame, rows, {name: Column(lo[rows] + offsets)})


def _semi_join(frame: Frame, name: str, the_set: SetValue, match) -> Frame:
    """`name in the_set` with a filter `(.., name, ..) in match.the_set`: each row's
    candidates read off the member set's rows that match its other components, kept where
    they are in `the_set`, in `the_set`'s order (the rows a filtered cross join keeps)."""
    rows, pos = _matches(frame, match.the_set, match.fixed)
    member_keys = match.the_set.keys[pos]
    keys = member_keys[:, match.at[0]]
    same = np.ones(len(rows), dtype=bool)
    for k in match.at[1:]:  # `(v, v) in ARCS`: the self-loops
        same &= member_keys[:, k] == keys
    at = np.where(same, the_set.position(keys), -1)
    keep = np.flatnonzero(at >= 0)
    order = keep[np.lexsort((at[keep], rows[keep]))]
    binding = next(_bindings)
    return _extend(frame, rows[order], {name: Column(None, the_set, at[order], 0, binding)})


def _matches(frame: Frame, the_set: SetValue, fixed: dict[int, np.ndarray],
             candidates: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(frame row, set row) of each row of `the_set` (of `candidates`, if given) whose
    `fixed` components equal the frame row's keys: a sort-merge join, grouped by frame row."""
    if candidates is None:
        candidates = np.arange(the_set.n, dtype=np.int64)
    bound = sorted(fixed)
    if not bound:  # nothing to match: every candidate for every frame row
        check_count(frame.n * len(candidates), "this index")
        return (np.repeat(np.arange(frame.n, dtype=np.int64), len(candidates)),
                np.tile(candidates, frame.n))
    row_keys = np.stack([fixed[k] for k in bound], axis=1)
    set_codes, row_codes = combine_columns(the_set.keys[candidates][:, bound], row_keys)
    order = candidates[np.argsort(set_codes, kind="stable")]
    ordered = np.sort(set_codes, kind="stable")
    first = np.searchsorted(ordered, row_codes, side="left")
    last = np.searchsorted(ordered, row_codes, side="right")
    counts = last - first
    rows = np.repeat(np.arange(frame.n, dtype=np.int64), counts)
    offsets = np.arange(len(rows), dtype=np.int64) - np.repeat(np.cumsum(counts) - counts, counts)
    return rows, order[first[rows] + offsets]


def _join_pattern(frame: Frame, names, fixed: dict[int, np.ndarray], the_set: SetValue,
                  pushed: dict[int, np.ndarray] | None = None) -> Frame:
    """Rows of `the_set` whose fixed components equal the frame row's keys (its dummies, or
    the matched values): a sort-merge join. `pushed` components match too, but bind their
    dummy (a column of the set's rows, as a free component has)."""
    rows, pos = _matches(frame, the_set, fixed | (pushed or {}), _alike(names, the_set.keys))
    return _extend(frame, rows, _columns(the_set, names, pos, skip=sorted(fixed)))
