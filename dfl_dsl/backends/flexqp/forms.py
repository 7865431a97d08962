"""The compiled LinearForm as dense torch tensors with the map from predicted params θ, so that
`batch(θ)` builds a QPBatch differentiably (θ may enter q, the row bounds and A).

Variable bounds become rows (after the model's rows): FlexQP's relaxation penalizes them like
any other constraint, so a violated bound is reported like a violated row. A model with neither
rows nor bounds gets one vacuous row (0ᵀx in [-inf, inf]: never active, never violated), since
ADMM's residuals and active sets reduce over the rows.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
import torch

from ...compile.linear import LinearForm
from ...errors import DflError
from .problem import QPBatch


class DenseForm:
    def __init__(self, form: LinearForm, *, dtype=torch.float64, device="cpu") -> None:
        if form.is_mip:
            raise DflError("FlexQP solves continuous QPs and LPs; this model has integer "
                           "variables", hint="use --backend highs")
        n = form.n
        bounded = np.nonzero(np.isfinite(form.lb) | np.isfinite(form.ub))[0]
        free = 0 if form.m + len(bounded) else 1  # the vacuous row, when there is no other
        self.form = form
        self.bound_cols = bounded
        self.m_rows = form.m
        E = sp.csr_array((np.ones(len(bounded)), (np.arange(len(bounded)), bounded)),
                         shape=(len(bounded), n))
        kw = {"dtype": dtype, "device": device}

        def t(a):
            return torch.as_tensor(np.asarray(a, dtype=float), **kw)

        self.P = t(form.P.toarray() if form.P is not None else np.zeros((n, n)))
        self.c = t(form.c)
        self.C = t(form.c_theta.toarray())
        self.A = t(sp.vstack([form.A, E, sp.csr_array((free, n))]).toarray())
        self.rl = t(np.concatenate([form.rl, form.lb[bounded], np.full(free, -np.inf)]))
        self.ru = t(np.concatenate([form.ru, form.ub[bounded], np.full(free, np.inf)]))
        R = form.row_theta.toarray()
        self.R = t(np.vstack([R, np.zeros((len(bounded) + free, R.shape[1]))]))
        rows, cols, ks, vals = form.a_theta
        self.a_rows = torch.as_tensor(rows, dtype=torch.long, device=device)
        self.a_cols = torch.as_tensor(cols, dtype=torch.long, device=device)
        self.a_ks = torch.as_tensor(ks, dtype=torch.long, device=device)
        self.a_vals = t(vals)

    @property
    def theta_in_A(self) -> bool:
        return len(self.a_rows) > 0

    def batch(self, theta: torch.Tensor | None, batch: int = 1) -> QPBatch:
        """The QPs at θ (B, nθ): q = c + Cθ, bounds shifted by −Rθ, A + Σ θₖAₖ (then per
        problem)."""
        if theta is None or theta.shape[-1] == 0:
            q = self.c.expand(batch, -1)
            return QPBatch(self.P, q, self.A, self.rl.expand(batch, -1),
                           self.ru.expand(batch, -1))
        B = theta.shape[0]
        q = self.c + theta @ self.C.T
        shift = theta @ self.R.T
        A = self.A
        if self.theta_in_A:
            b = torch.arange(B, device=theta.device).repeat_interleave(len(self.a_rows))
            vals = (theta[:, self.a_ks] * self.a_vals).reshape(-1)
            A = A.expand(B, -1, -1).index_put(
                (b, self.a_rows.repeat(B), self.a_cols.repeat(B)), vals, accumulate=True)
        return QPBatch(self.P, q, A, self.rl - shift, self.ru - shift)

    def objective(self, x: np.ndarray, theta: np.ndarray | None) -> float:
        """The canonical (minimized) objective ½xᵀPx + c(θ)ᵀx + c0(θ)."""
        c, c0 = self.form.objective_at(theta)
        P = self.form.P
        quad = 0.5 * float(x @ (P @ x)) if P is not None else 0.0
        return quad + float(c @ x) + c0
