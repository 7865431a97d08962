"""Symbolic shapes before the data: sizes are literal ints, param names or unknown (None)."""

from __future__ import annotations

from collections.abc import Sequence

from ..check.info import Dim, Info
from .base import AtomError


def same_dim(a: Dim, b: Dim) -> bool:
    """Not *definitely* different (symbolic sizes are only known with data)."""
    return a is None or b is None or a == b or not (isinstance(a, int) and isinstance(b, int))


def definitely_different(a: Dim, b: Dim) -> bool:
    return not same_dim(a, b)


def broadcast(shapes: Sequence[tuple[Dim, ...]]) -> tuple[Dim, ...]:
    """numpy broadcasting of symbolic shapes; raises AtomError on a definite mismatch."""
    ndim = max((len(s) for s in shapes), default=0)
    out: list[Dim] = []
    for axis in range(ndim):
        size: Dim = 1
        for s in shapes:
            k = axis - (ndim - len(s))
            if k < 0:
                continue
            d = s[k]
            if d == 1:
                continue
            if size == 1:
                size = d
            elif definitely_different(size, d):
                raise AtomError(f"shapes {' and '.join(fmt(s) for s in shapes)} don't match")
            elif isinstance(d, int) or size is None:
                size = d
        out.append(size)
    return tuple(out)


def fmt(shape: tuple[Dim, ...]) -> str:
    if not shape:
        return "scalar"
    return "[" + ", ".join("?" if d is None else str(d).lstrip("#") for d in shape) + "]"


def dim_of(info: Info) -> Dim:
    return info.dim
