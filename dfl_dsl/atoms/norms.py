"""Norms of a whole array (entrywise on a matrix, one value per frame row): `norm1` and
`norm_inf` (piecewise linear), `norm2` (a second-order cone), and `nnz` (the number of nonzero
entries, the L0 penalty of a STIEFEL model; no curvature)."""

from __future__ import annotations

import numpy as np

from ..check.info import Curv, Sign
from .base import GroupReduction, PiecewiseLinear, by_sign


class Norm(GroupReduction):
    curvature, smooth = Curv.CONVEX, False

    def sign(self, args):
        return Sign.NONNEG

    def monotonicity(self, i, args):
        return by_sign(args[i])


class Norm1(PiecewiseLinear, Norm):
    name, stiefel_penalty, ball = "norm1", "l1", True

    def reduce(self, data, axes):
        return np.abs(data).sum(axis=axes)

    def torch_groups(self, value, groups, param):
        return groups.sum(value.abs())

    def cvxpy_group(self, arg, param):
        import cvxpy as cp

        return cp.norm1(arg)

    def aux_columns(self, node, scenarios=1):
        return node.args[0].rows  # one s_i per entry

    def lower(self, node, weights, sign, low):
        """One s_i >= |e_i| per entry of the argument, and Σ_i s_i in place of each group."""
        import scipy.sparse as sp

        from ..evaluate.poly import Poly
        from .epigraph import L1Pairs, check_direction, sides, weighted

        check_direction(node, weights, sign, True)
        w = low.width
        arg = node.args[0]
        both = sides(arg, low)
        s = low.new(arg.rows, lower=0.0)
        sym = Poly.symbols(s, w)
        for side in both:
            a = low.argument(arg, side)
            low.rows("norm1", sym - a if side > 0 else sym + a, 0.0, np.inf)
        columns = _plain_columns(arg)
        if columns is not None and len(both) == 2:
            low.declare(L1Pairs(columns, s))
        owner = np.repeat(np.arange(node.rows), np.diff(node.starts))
        return weighted(sym, weights[:, owner] if sp.issparse(weights) else weights[owner], w)


def _plain_columns(arg) -> np.ndarray | None:
    """The columns of z an argument takes, when each of its rows is one of them, as is."""
    from ..evaluate.poly import Poly

    if not isinstance(arg, Poly) or arg.degree != 1 or arg.const.any():
        return None
    lin = arg.lin.tocsr()
    if not np.array_equal(np.diff(lin.indptr), np.ones(arg.rows)) or np.any(lin.data != 1.0):
        return None
    return lin.indices.astype(np.int64)


class NormInf(PiecewiseLinear, Norm):
    name, two_sided = "norm_inf", True

    def reduce(self, data, axes):
        return np.abs(data).max(axis=axes, initial=0.0)  # (0 for an empty array)

    def torch_groups(self, value, groups, param):
        return groups.max(value.abs())

    def cvxpy_group(self, arg, param):
        import cvxpy as cp

        return cp.norm_inf(arg)


class Norm2(Norm):
    name = "norm2"

    def reduce(self, data, axes):
        return np.sqrt((data**2).sum(axis=axes))

    def torch_groups(self, value, groups, param):
        return groups.sum(value**2).sqrt()

    def cvxpy_group(self, arg, param):
        import cvxpy as cp

        return cp.norm2(arg)


class Nnz(GroupReduction):
    name, curvature, smooth, stiefel_penalty = "nnz", Curv.UNKNOWN, False, "l0"

    def sign(self, args):
        return Sign.NONNEG

    def reduce(self, data, axes):
        return (data != 0).sum(axis=axes).astype(float)


ATOMS = [Nnz(), Norm1(), Norm2(), NormInf()]
