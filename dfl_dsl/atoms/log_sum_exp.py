"""`log_sum_exp(x)` = log Σ_i exp(x_i) over every entry of x, CVXPY's semantics: convex,
increasing in each entry and smooth — a soft maximum, max(x) <= log_sum_exp(x) <= max(x) +
log n. Its conic form is the exponential cone (CVXPY); no LP/QP lowering exists, so only a
conic backend and the torch ones (a STIEFEL objective's smooth part) take it. Every form
subtracts the largest entry first, so no exp overflows."""

from __future__ import annotations

import numpy as np

from ..check.info import Curv
from .base import INCR, GroupReduction


class LogSumExp(GroupReduction):
    name, curvature = "log_sum_exp", Curv.CONVEX

    def monotonicity(self, i, args):
        return INCR

    def reduce(self, data, axes):
        from scipy.special import logsumexp  # (heavy: imported where it is used)

        if not data.size:  # log 0 (scipy fails on an empty array of two axes or more)
            return np.full([s for k, s in enumerate(data.shape) if k not in axes], -np.inf)
        return logsumexp(data, axis=axes)

    def torch_groups(self, value, groups, param):
        top = groups.max(value).detach()  # a constant shift: the gradient is the softmax's
        shifted = (value - top[..., groups.owner.to(value.device)]).exp()
        return groups.sum(shifted).log() + top

    def cvxpy_group(self, arg, param):
        import cvxpy as cp

        return cp.log_sum_exp(arg)


ATOMS = [LogSumExp()]
