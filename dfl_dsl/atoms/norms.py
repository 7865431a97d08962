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
    name, stiefel_penalty = "norm1", "l1"

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
        from .epigraph import check_direction, sides, weighted

        check_direction(node, weights, sign, True)
        w = low.width
        arg = node.args[0]
        both = sides(arg, low)
        s = low.new(arg.rows, lower=0.0)
        sym = Poly.symbols(s, w)
        for side in both:
            a = low.argument(arg, side)
            low.rows("norm1", sym - a if side > 0 else sym + a, 0.0, np.inf)
        owner = np.repeat(np.arange(node.rows), np.diff(node.starts))
        return weighted(sym, weights[:, owner] if sp.issparse(weights) else weights[owner], w)


class NormInf(PiecewiseLinear, Norm):
    name, two_sided = "norm_inf", True

    def reduce(self, data, axes):
        return np.abs(data).max(axis=axes) if data.size else np.zeros(())

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
