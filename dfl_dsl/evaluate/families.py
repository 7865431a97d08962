"""Indexed sets (`set S{I} within T;`, iterated as `j in S[i]`) and `setof{...} (i, j)`.

A family of sets is one key table holding every member set, one after another in the order of
its index's entries, and the offsets where each begins (CSR layout). `S[i]` for all rows of a
frame is then a lookup of i's entry and a pair of offsets per row (`RowSets`), never a Python
set per element.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .elements import SetValue, combine_columns
from .entities import Domain
from .frame import Frame, RowRanges, RowSets


@dataclass
class SetFamily:
    """A bound `set S{I}`: member set p is `keys[starts[p]:starts[p + 1]]`."""

    name: str
    domain: Domain
    keys: np.ndarray  # (m, dim)
    starts: np.ndarray  # (domain.n + 1,)
    circular: bool = False
    _index: SetValue | None = field(default=None, repr=False)

    def members(self, pos: np.ndarray, framed: bool) -> SetValue | RowSets:
        """The member sets at entry positions `pos` (one per frame row, or one in all)."""
        if framed:
            return RowSets(self.keys, self.starts[pos], self.starts[pos + 1], pos, self.index,
                           self.circular)
        p = int(pos[0])
        return SetValue(self.keys[self.starts[p] : self.starts[p + 1]], circular=self.circular)

    @property
    def index(self) -> SetValue:
        """(entry, member...) for every member: `j in S[i]` tests are lookups in it (built on
        first use, then kept: the family is fixed once bound)."""
        if self._index is None:
            owners = np.repeat(np.arange(self.domain.n, dtype=np.int64), np.diff(self.starts))
            self._index = SetValue(np.concatenate([owners[:, None], self.keys], axis=1))
        return self._index

    def all_members(self) -> SetValue:
        """Every member of every set (repeats kept): what a `within` check looks at."""
        return SetValue(self.keys)

    def owner(self, member: int) -> str:
        """The `[i]` of the set that row `member` of `keys` belongs to."""
        p = int(np.searchsorted(self.starts, member, side="right")) - 1
        return self.domain.label(p)


def as_family(the_set: SetValue | RowSets | RowRanges, n: int) -> tuple[np.ndarray, np.ndarray]:
    """(keys, starts) of a set computed once per entry of a domain of `n` entries."""
    if isinstance(the_set, SetValue):  # the same set for every entry
        keys = np.tile(the_set.keys, (n, 1))
        return keys, np.arange(n + 1, dtype=np.int64) * the_set.n
    if isinstance(the_set, RowRanges):
        lo = np.broadcast_to(the_set.lo, (n,))
        hi = np.broadcast_to(the_set.hi, (n,))
        counts = np.maximum(hi - lo + 1, 0)
        rows = np.repeat(np.arange(n), counts)
        offsets = np.arange(len(rows)) - np.repeat(np.cumsum(counts) - counts, counts)
        keys = (lo[rows] + offsets).astype(np.int64).reshape(-1, 1)
        return keys, np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    _, keys = the_set.members()
    return keys, np.concatenate([[0], np.cumsum(the_set.counts)]).astype(np.int64)


def collect(child: Frame, parent: Frame, table: np.ndarray) -> SetValue | RowSets:
    """`setof`: the distinct rows of `table` (one per child row), in order — one set, or one
    per parent row when the parent frame has several rows."""
    if parent.n == 1:
        codes = combine_columns(table)[0] if len(table) else np.zeros(0, dtype=np.int64)
        _, first = np.unique(codes, return_index=True)
        return SetValue(table[np.sort(first)])
    owners = child.parent_idx.reshape(-1, 1)
    codes = combine_columns(np.concatenate([owners, table], axis=1))[0]
    _, first = np.unique(codes, return_index=True)
    keep = np.sort(first)
    counts = np.bincount(child.parent_idx[keep], minlength=parent.n)
    starts = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    return RowSets(table[keep], starts[:-1], starts[1:])
