"""Values of expressions inside a frame, and the vectorized algebra on them.

A `Val` is numeric data (a numpy array), a `Poly` (affine/quadratic in z = [x; θ]) or an `NL`
(nonlinear), each for all frame rows at once. `framed` says whether the value varies with the
frame's rows (a leading axis of length frame.n); `shape` is the numpy-style shape of one row.
Symbolic payloads store rows frame-major, then in C order of `shape`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from .nonlinear import NL, AtomNode
from .poly import Poly, segment_sum_values

Payload = np.ndarray | Poly | NL


@dataclass
class Val:
    payload: object
    framed: bool = False
    shape: tuple[int, ...] = ()
    kind: str = "num"  # "num" | "elem" | "bool" | "set"

    @property
    def symbolic(self) -> bool:
        return isinstance(self.payload, (Poly, NL))

    @property
    def size(self) -> int:
        return math.prod(self.shape)


class EvalError(Exception):
    """A data-dependent problem found while evaluating; the evaluator adds the position."""

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.hint = hint


# ---------------------------------------------------------------------- alignment
def out_shape(*vals: Val) -> tuple[int, ...]:
    try:
        return tuple(np.broadcast_shapes(*(v.shape for v in vals)))
    except ValueError:
        shapes = " and ".join(str(list(v.shape)) for v in vals)
        raise EvalError(f"shapes {shapes} don't match") from None


def aligned_array(v: Val, framed: bool, ndim: int, n: int) -> np.ndarray:
    """`v`'s data reshaped to broadcast against (n, *shape) (framed) or shape (unframed)."""
    a = np.asarray(v.payload)
    if v.framed:
        return a.reshape((n,) + (1,) * (ndim - len(v.shape)) + tuple(v.shape))
    return a


def index_map(v: Val, framed: bool, shape: tuple[int, ...], n: int) -> np.ndarray:
    """For every row of the target layout, the row of `v` it reads (broadcasting)."""
    lead = (n,) if v.framed else ((1,) if framed else ())
    base = np.arange(v.size * (n if v.framed else 1), dtype=np.int64)
    base = base.reshape(lead + (1,) * (len(shape) - len(v.shape)) + tuple(v.shape))
    target = ((n,) if framed else ()) + tuple(shape)
    return np.broadcast_to(base, target).ravel()


def unframe(v: Val, n: int) -> Val:
    """A framed value in a one-row frame (the root) as a frame-free value."""
    if not v.framed:
        return v
    if n != 1:
        raise EvalError("this value varies with the index here, but must not")
    payload = v.payload if v.symbolic else np.asarray(v.payload).reshape(v.shape)
    return Val(payload, False, v.shape, v.kind)


def expand(v: Val, framed: bool, shape: tuple[int, ...], n: int, width: int) -> Poly | NL:
    """`v` as a symbolic payload laid out over (frame?, shape)."""
    if v.framed and not framed:
        v = unframe(v, n)
    payload = v.payload
    if not isinstance(payload, (Poly, NL)):
        arr = np.broadcast_to(
            aligned_array(v, framed, len(shape), n), ((n,) if framed else ()) + tuple(shape)
        )
        return Poly.constant(arr, width)
    rows_now = v.size * (n if v.framed else 1)
    rows_want = math.prod(shape) * (n if framed else 1)
    if rows_now == rows_want and (v.framed == framed) and tuple(v.shape) == tuple(shape):
        return payload
    return payload.take(index_map(v, framed, shape, n))


def flat_data(v: Val, framed: bool, shape: tuple[int, ...], n: int) -> np.ndarray:
    if v.framed and not framed:
        v = unframe(v, n)
    target = ((n,) if framed else ()) + tuple(shape)
    return np.broadcast_to(aligned_array(v, framed, len(shape), n), target).ravel()


# ---------------------------------------------------------------------- arithmetic
def add(a: Val, b: Val, n: int, width: int, sign: float = 1.0) -> Val:
    shape = out_shape(a, b)
    framed = a.framed or b.framed
    if not a.symbolic and not b.symbolic:
        left = aligned_array(a, framed, len(shape), n)
        right = aligned_array(b, framed, len(shape), n)
        with np.errstate(invalid="ignore"):
            out = left + right if sign > 0 else left - right
        return Val(_defined(out, "inf - inf"), framed, shape)
    left = expand(a, framed, shape, n, width)
    right = expand(b, framed, shape, n, width)
    if sign < 0:
        right = right.scale(-1.0)
    total = right + left if isinstance(right, NL) and not isinstance(left, NL) else left + right
    return Val(total, framed, shape)


def multiply(a: Val, b: Val, n: int, width: int) -> Val:
    shape = out_shape(a, b)
    framed = a.framed or b.framed
    if not a.symbolic and not b.symbolic:
        left = aligned_array(a, framed, len(shape), n)
        right = aligned_array(b, framed, len(shape), n)
        with np.errstate(invalid="ignore"):
            out = left * right
        return Val(_defined(out, "0 * inf"), framed, shape)
    if not a.symbolic or not b.symbolic:
        data, sym = (a, b) if not a.symbolic else (b, a)
        factor = flat_data(data, framed, shape, n).astype(float, copy=False)
        return Val(expand(sym, framed, shape, n, width).scale(factor), framed, shape)
    left = expand(a, framed, shape, n, width)
    right = expand(b, framed, shape, n, width)
    if isinstance(left, NL) or isinstance(right, NL):
        raise EvalError("a product of two nonlinear expressions is not supported")
    if left.degree + right.degree > 2:
        raise EvalError("this product has degree > 2 in the variables and params")
    return Val(left.times(right), framed, shape)


def divide(a: Val, b: Val, n: int, width: int) -> Val:
    if b.symbolic:
        raise EvalError("can only divide by data")
    shape = out_shape(a, b)
    framed = a.framed or b.framed
    divisor = aligned_array(b, framed, len(shape), n).astype(float)
    if np.any(divisor == 0):
        raise EvalError("division by zero")
    if not a.symbolic:
        with np.errstate(invalid="ignore"):
            out = aligned_array(a, framed, len(shape), n) / divisor
        return Val(_defined(out, "inf / inf"), framed, shape)
    factor = 1.0 / np.broadcast_to(divisor, ((n,) if framed else ()) + shape).ravel()
    return Val(expand(a, framed, shape, n, width).scale(factor), framed, shape)


def integer_division(a: Val, b: Val, n: int, op: str) -> Val:
    """AMPL's `a mod b` and `a div b` on data: the quotient truncated toward zero and the
    remainder with the dividend's sign, so that a = b * (a div b) + a mod b (C's `fmod`)."""
    if a.symbolic or b.symbolic:
        raise EvalError(f"`{op}` takes data, not variables")
    shape = out_shape(a, b)
    framed = a.framed or b.framed
    left = aligned_array(a, framed, len(shape), n)
    right = aligned_array(b, framed, len(shape), n)
    if np.any(right == 0):
        raise EvalError(f"`{op}` by zero")
    with np.errstate(invalid="ignore"):
        rest = np.fmod(left, right)
        if op == "mod":
            out = rest
        elif np.issubdtype(rest.dtype, np.integer):
            out = (left - rest) // right  # exact: left - rest is a multiple of right
        else:
            out = np.trunc(left / right)
    return Val(_defined(out, f"inf {op} 2"), framed, shape)


def _defined(out, example: str):
    """Data arithmetic on infinities can leave NaN (the data itself never holds one)."""
    if np.issubdtype(np.asarray(out).dtype, np.floating) and np.isnan(out).any():
        raise EvalError(f"this is undefined for some of these values ({example})")
    return out


def negate(a: Val) -> Val:
    if a.symbolic:
        return Val(a.payload.scale(-1.0), a.framed, a.shape)
    return Val(-np.asarray(a.payload), a.framed, a.shape)


def transpose(a: Val, n: int) -> Val:
    if len(a.shape) < 2:
        return a
    shape = tuple(reversed(a.shape))
    if not a.symbolic:
        arr = np.asarray(a.payload)
        axes = tuple(range(arr.ndim))
        lead = 1 if a.framed else 0
        return Val(arr.transpose(axes[:lead] + tuple(reversed(axes[lead:]))), a.framed, shape)
    lead = (n,) if a.framed else ()
    idx = np.arange(a.size * (n if a.framed else 1)).reshape(lead + a.shape)
    perm = tuple(range(len(lead))) + tuple(reversed(range(len(lead), idx.ndim)))
    return Val(a.payload.take(idx.transpose(perm).ravel()), a.framed, shape)


def matmul(a: Val, b: Val, n: int, width: int) -> Val:
    """numpy `@` semantics on vectors and matrices, for data and symbolic operands."""
    if not a.shape or not b.shape:
        raise EvalError("`@` needs vectors or matrices")
    if a.shape[-1] != b.shape[0]:
        raise EvalError(f"shape mismatch in `@`: {list(a.shape)} @ {list(b.shape)}")
    k = a.shape[-1]
    left_rows, right_cols = a.shape[:-1], b.shape[1:]
    shape = tuple(left_rows) + tuple(right_cols)
    framed = a.framed or b.framed
    if not a.symbolic and not b.symbolic:
        return Val(_einsum_matmul(a, b, n, framed), framed, shape)
    # fast path: a fixed data matrix times an unframed symbolic operand is a sparse row map
    # (the Kronecker factors are built as COO: scipy's direct CSR kron is several times slower)
    if not framed and (not a.symbolic or not b.symbolic):
        i = math.prod(left_rows)
        j = math.prod(right_cols)
        if not a.symbolic:
            mat = sp.csr_array(np.asarray(a.payload, dtype=float).reshape(i, k))
            m = sp.kron(mat, sp.identity(j, format="csr"), format="coo").tocsr()
            return Val(b.payload.rowmap(m), False, shape)
        mat = sp.csr_array(np.asarray(b.payload, dtype=float).reshape(k, j).T)
        m = sp.kron(sp.identity(i, format="csr"), mat, format="coo").tocsr()
        return Val(a.payload.rowmap(m), False, shape)
    # general path: out[f, i, j] = Σ_k a[f, i, k] b[f, k, j], as a product then a segment sum
    i, j = math.prod(left_rows), math.prod(right_cols)
    lead = n if framed else 1
    f_idx = np.arange(lead).reshape(lead, 1, 1, 1)
    ii = np.arange(i).reshape(1, i, 1, 1)
    jj = np.arange(j).reshape(1, 1, j, 1)
    kk = np.arange(k).reshape(1, 1, 1, k)
    full = (lead, i, j, k)  # an unframed operand is read again for every frame row
    a_rows = np.broadcast_to((f_idx if a.framed else 0) * (i * k) + ii * k + kk, full)
    b_rows = np.broadcast_to((f_idx if b.framed else 0) * (k * j) + kk * j + jj, full)
    total = lead * i * j * k
    a_exp = Val(_take_any(a, a_rows.ravel()), False, (total,))
    b_exp = Val(_take_any(b, b_rows.ravel()), False, (total,))
    starts = np.arange(lead * i * j + 1, dtype=np.int64) * k
    return Val(_group_products(a_exp, b_exp, starts, n, width), framed, shape)


def inner(a: Val, b: Val, n: int, width: int) -> Val:
    """Σ over the per-row array of a * b (elementwise, broadcast), keeping the frame axis:
    sum(a * b) without the rowwise products of two symbolic operands (see `Poly.inner_sum`)."""
    shape = out_shape(a, b)
    framed = a.framed or b.framed
    if not a.symbolic and not b.symbolic:
        return reduce_shape(multiply(a, b, n, width), n, width)
    size = math.prod(shape)
    groups = n if framed else 1
    rows = size * groups
    starts = group_starts(groups, size)
    if not a.symbolic or not b.symbolic:  # a weighted sum of rows: zero weights drop out
        data, sym = (a, b) if not a.symbolic else (b, a)
        weights = sp.csr_array((flat_data(data, framed, shape, n).astype(float),
                                np.arange(rows, dtype=np.int64), starts), shape=(groups, rows))
        weights.eliminate_zeros()
        return Val(expand(sym, framed, shape, n, width).rowmap(weights), framed, ())
    left = Val(expand(a, framed, shape, n, width), False, (rows,))
    right = Val(expand(b, framed, shape, n, width), False, (rows,))
    return Val(_group_products(left, right, starts, n, width), framed, ())


def _group_products(a: Val, b: Val, starts: np.ndarray, n: int, width: int):
    """Σ_{t∈g} a[t] b[t] for the row groups starts[g]:starts[g+1] of two flat operands."""
    if isinstance(a.payload, Poly) and isinstance(b.payload, Poly):
        if a.payload.degree + b.payload.degree > 2:
            raise EvalError("this product has degree > 2 in the variables and params")
        return a.payload.inner_sum(b.payload, starts)
    return segment_sum(multiply(a, b, n, width).payload, starts)


def _take_any(v: Val, rows: np.ndarray):
    if v.symbolic:
        return v.payload.take(rows)
    return np.asarray(v.payload, dtype=float).ravel()[rows]


def _einsum_matmul(a: Val, b: Val, n: int, framed: bool) -> np.ndarray:
    la, lb = len(a.shape), len(b.shape)
    left = "ik"[2 - la:] if la <= 2 else None
    right = "kj"[: lb] if lb <= 2 else None
    if left is None or right is None:
        raise EvalError("`@` works on vectors and matrices only")
    out = left.replace("k", "") + right.replace("k", "")
    spec_a = ("f" if a.framed else "") + left
    spec_b = ("f" if b.framed else "") + right
    spec_o = ("f" if framed else "") + out
    return np.einsum(f"{spec_a},{spec_b}->{spec_o}", np.asarray(a.payload), np.asarray(b.payload))


def group_starts(groups: int, size: int) -> np.ndarray:
    """The starts of `groups` row groups of `size` rows each (length groups + 1). Size 0 (an
    empty array, say `norm1(X)` with X n x 0) is `groups` empty groups: all starts 0, never
    the single start of a step-`size` range, which is one group too few."""
    return np.arange(groups + 1, dtype=np.int64) * size


def segment_prod(rows: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """The product of each group's rows (group p: rows starts[p]:starts[p+1]); 1 for an empty
    group, as AMPL's `prod` over an empty set."""
    out = np.ones((len(starts) - 1,) + rows.shape[1:])
    filled = starts[:-1] < starts[1:]
    if filled.any():  # (reduceat over the nonempty starts: each group runs to the next one)
        out[filled] = np.multiply.reduceat(rows, starts[:-1][filled], axis=0)
    return out


def segment_sum(payload, starts: np.ndarray):
    if isinstance(payload, (Poly, NL)):
        return payload.segment_sum(starts)
    return segment_sum_values(np.asarray(payload), starts)


def entrywise_sum(payload: Poly | NL, starts: np.ndarray, g: int) -> Poly | NL:
    """Σ over each row group of a body with `g` entries per row (rows frame-major, entries
    in C order): entry c of group p sums entry c of the group's rows, one sparse row map."""
    n, rows = len(starts) - 1, int(starts[-1])
    group = np.repeat(np.arange(n, dtype=np.int64), np.diff(starts))
    out = np.repeat(group, g) * g + np.tile(np.arange(g, dtype=np.int64), rows)
    gather = sp.csr_array((np.ones(len(out)), (out, np.arange(len(out)))), shape=(n * g, rows * g))
    return payload.rowmap(gather)


def reduce_shape(v: Val, n: int, width: int, how: str = "sum") -> Val:
    """Sum (or another reduction) over the whole per-row array, keeping the frame axis."""
    g = v.size
    if not v.symbolic:
        arr = np.asarray(v.payload)
        axes = tuple(range(1 if v.framed else 0, arr.ndim))
        fn = {"sum": np.sum, "max": np.max, "min": np.min}[how]
        return Val(fn(arr, axis=axes) if axes else arr, v.framed, ())
    starts = group_starts(n if v.framed else 1, g)
    if how == "sum":
        return Val(v.payload.segment_sum(starts), v.framed, ())
    node = AtomNode(how, (v.payload,), len(starts) - 1, starts)
    return Val(NL.of(node, width), v.framed, ())
