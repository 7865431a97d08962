"""Row-number digits: the index arrays of a cross join, kept as two numbers until asked for.

A cross join `{i in I, j in J}` makes rows r = 0 .. |I||J| - 1 whose position in I is
r // |J| and in J is r % |J|: each is one digit of r in the mixed radix of the sets' sizes.
Keeping (n, inner, size) instead of the n-entry array costs nothing to build, repeat or tile,
and lets a lookup `c[i, j]` over the same sets in the same order see that its entry positions
are the row numbers themselves: the param's values are its own array (no gather) and the
variable's columns a range. At a million rows each array not written is 8 MB not touched.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Digit:
    """Rows r = 0 .. n-1 hold (r // inner) % size; n is a multiple of inner * size (the rows
    run through whole periods), which keeps repeats, tiles and compositions digits."""

    n: int
    inner: int
    size: int

    @staticmethod
    def rows(n: int) -> Digit:
        """0 .. n-1 (each row its own number)."""
        return Digit(n, 1, n)

    @property
    def identity(self) -> bool:
        return self.inner == 1 and self.size == self.n

    def array(self) -> np.ndarray:
        out = np.arange(self.n, dtype=np.int64)
        if self.inner > 1:
            out //= self.inner
        if self.inner * self.size < self.n:
            out %= self.size
        return out

    def repeat(self, times: int) -> Digit:
        """np.repeat(array, times): each row `times` times in a row (none: no rows)."""
        if not times:
            return Digit(0, 1, self.size)
        return Digit(self.n * times, self.inner * times, self.size)

    def tile(self, tiles: int) -> Digit:
        """np.tile(array, tiles): the whole array `tiles` times end to end."""
        return Digit(self.n * tiles, self.inner, self.size)

    def at(self, idx: Digit) -> Digit | None:
        """array[idx.array()] as a digit, where idx runs over this array's rows (its size is
        n): ((q % n) // inner) % size is (q // inner) % size when n is whole periods."""
        if idx.size != self.n:
            return None
        return Digit(idx.n, self.inner * idx.inner, self.size)


def transposed(digits: list[Digit], shape: tuple[int, ...]) -> np.ndarray | None:
    """The row-major flat positions over `shape` when the digits count through all of it in
    another axis order (`sum{j in J, i in I} x[i, j]`: the rows are the entries transposed):
    one transposing copy of a range, instead of a digit array per axis and their sum. None
    when they don't."""
    total = int(np.prod(shape, dtype=np.int64))
    if not digits or digits[0].n != total:
        return None
    # outermost first; a size-1 axis (its digit always 0) can sit anywhere: last among ties
    order = sorted(range(len(digits)), key=lambda k: (-digits[k].inner, -digits[k].size))
    axes = tuple(shape[k] for k in order)
    if consecutive([digits[k] for k in order], axes) is None or digits[order[-1]].inner != 1:
        return None
    index = np.int32 if total < 2**31 else np.int64  # (positions below `total`: no overflow)
    return np.arange(total, dtype=index).reshape(shape).transpose(order).ravel()


def consecutive(digits: list[Digit], shape: tuple[int, ...]) -> Digit | None:
    """The row-major flat position Σ digit_k · stride_k over `shape` as one digit, when the
    digits count through the shape in order (digit k's period is the next one's times its
    size, as a cross join over the shape's sets in order makes them); else None."""
    for k, (d, size) in enumerate(zip(digits, shape, strict=True)):
        if d.size != size:
            return None
        if k + 1 < len(digits) and d.inner != digits[k + 1].inner * shape[k + 1]:
            return None
    total = int(np.prod(shape, dtype=np.int64))
    return Digit(digits[0].n, digits[-1].inner, total)
