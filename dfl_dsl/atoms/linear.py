"""Linear maps of a whole array: `sum(e)`, `trace(M)` and `diag(v or M)`. They act on the
polynomials themselves (no atom node): `trace(A @ B)` forms only the product's diagonal."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .. import ast
from ..check.info import Curv, Sign
from ..errors import DflError
from .base import Atom, AtomError

if TYPE_CHECKING:
    from ..evaluate.values import Val


class Linear(Atom):
    curvature, linear = Curv.AFFINE, True

    def sign(self, args):
        return args[0].sign


class Sum(Linear):
    name = "sum"

    def shape(self, args):
        return ()

    def evaluate(self, ev, node, frame):
        from ..evaluate.values import reduce_shape

        return reduce_shape(ev.number(node.args[0], frame), frame.n, ev.width)


class Trace(Linear):
    name = "trace"

    def shape(self, args):
        return ()

    def validate(self, args):
        if len(args[0].shape) != 2:
            raise AtomError("`trace` takes a square matrix", 0)

    def evaluate(self, ev, node, frame):
        if isinstance(node.args[0], ast.BinOp) and node.args[0].op == "@":
            return self._of_product(ev, node, frame)
        return self._trace(node, ev.number(node.args[0], frame), frame)

    def _trace(self, node: ast.Call, arg: Val, frame) -> Val:
        from ..evaluate.values import Val, group_starts

        if len(arg.shape) != 2 or arg.shape[0] != arg.shape[1]:
            raise DflError(f"trace needs a square matrix, got {list(arg.shape)}", node.pos)
        k = arg.shape[0]
        if not arg.symbolic:
            data = np.asarray(arg.payload)
            return Val(np.trace(data, axis1=-2, axis2=-1), arg.framed, ())
        lead = frame.n if arg.framed else 1
        diag = (np.arange(lead)[:, None] * k * k + np.arange(k)[None, :] * (k + 1)).ravel()
        return Val(arg.payload.take(diag).segment_sum(group_starts(lead, k)), arg.framed, ())

    def _of_product(self, ev, node: ast.Call, frame) -> Val:
        """trace(A @ B) = Σ_ik A[i, k] B[k, i]: the product's diagonal alone. Forming A @ B first
        costs p times more (p = its side): for trace(Xᵀ C X), X n × r, the r² entries of XᵀCX
        hold r²n² quadratic terms, the diagonal only rn²."""
        from ..evaluate.values import inner, transpose

        product = node.args[0]
        a = ev.number(product.left, frame)
        b = ev.number(product.right, frame)
        if len(a.shape) == 2 and len(b.shape) == 2 and a.shape == tuple(reversed(b.shape)):
            return inner(a, transpose(b, frame.n), frame.n, ev.width)
        # not square (or not matrices): the ordinary path reports the error where it is
        return self._trace(node, ev.number(product, frame), frame)


class Diag(Linear):
    name = "diag"

    def shape(self, args):
        (shape,) = [a.shape for a in args]
        if len(shape) == 1:
            return (shape[0], shape[0])
        if len(shape) == 2:
            return (shape[0],)
        raise AtomError("`diag` takes a vector or a square matrix", 0)

    def sign(self, args):
        return args[0].sign.plus(Sign.ZERO)

    def evaluate(self, ev, node, frame):
        import scipy.sparse as sp

        from ..evaluate.values import EvalError, Val

        arg = ev.number(node.args[0], frame)
        if len(arg.shape) == 2:
            k = min(arg.shape)
            if not arg.symbolic:
                diagonal = np.diagonal(np.asarray(arg.payload), axis1=-2, axis2=-1)
                return Val(diagonal, arg.framed, (k,))
            lead = frame.n if arg.framed else 1
            cols = arg.shape[1]
            idx = (np.arange(lead)[:, None] * arg.shape[0] * cols
                   + np.arange(k)[None, :] * (cols + 1))
            return Val(arg.payload.take(idx.ravel()), arg.framed, (k,))
        if len(arg.shape) != 1:
            raise EvalError("diag takes a vector or a matrix")
        k = arg.shape[0]
        if not arg.symbolic:
            data = np.asarray(arg.payload)
            out = np.zeros(data.shape + (k,))
            idx = np.arange(k)
            out[..., idx, idx] = data
            return Val(out, arg.framed, (k, k))
        lead = frame.n if arg.framed else 1
        rows = (np.arange(lead)[:, None] * k * k + np.arange(k)[None, :] * (k + 1)).ravel()
        cols = np.arange(lead * k)
        m = sp.csr_array((np.ones(len(rows)), (rows, cols)), shape=(lead * k * k, lead * k))
        return Val(arg.payload.rowmap(m), arg.framed, (k, k))


ATOMS = [Sum(), Trace(), Diag()]
