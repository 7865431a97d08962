"""A family of LPs indexed by parameters θ — costs, row bounds and matrix entries affine in θ,
as `LinearForm` records them — turned into one `BatchLP` for a batch of θ.

Gen-DFL's scenario problems are such a family: θ = vec(Ξ), the S scenarios of one sample,
enters the costs (the mean), the epigraph rows' coefficients (u_s >= ξ_sᵀ G x - η) and their
bounds. The maps are kept as torch tensors on the device, so a batch of θ becomes a batch of
LPs with three matrix products and no Python loop over samples.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
import torch

from ...compile.linear import LinearForm
from .operator import Pattern, RowOperator
from .problem import BatchLP


class ParametricLP:
    def __init__(self, form: LinearForm, device: torch.device | str = "cpu") -> None:
        self.form, self.device = form, torch.device(device)
        as_t = _tensor_on(self.device)
        self.c, self.c_theta = as_t(form.c), _dense_or_sparse(form.c_theta, self.device)
        self.rl, self.ru = as_t(form.rl), as_t(form.ru)
        self.row_theta = (None if form.row_theta.nnz == 0
                          else _dense_or_sparse(form.row_theta, self.device))
        self.lb, self.ub = as_t(form.lb), as_t(form.ub)
        rows, cols, ks, coef = form.a_theta
        base = sp.coo_array(form.A)
        # one pattern for every θ: A's entries and the θ-dependent ones
        pattern = sp.coo_array((np.ones(base.nnz + len(rows)),
                                (np.concatenate([base.row, rows]),
                                 np.concatenate([base.col, cols]))), shape=form.A.shape).tocsr()
        pattern.sum_duplicates()
        coo = pattern.tocoo()
        self.pattern = Pattern(torch.as_tensor(coo.row.astype(np.int64), device=self.device),
                               torch.as_tensor(coo.col.astype(np.int64), device=self.device),
                               form.A.shape)
        width = form.A.shape[1]
        linear = coo.row.astype(np.int64) * width + coo.col  # sorted: CSR is row-major

        def position(r: np.ndarray, c: np.ndarray) -> np.ndarray:
            return np.searchsorted(linear, r.astype(np.int64) * width + c)

        values = np.zeros(coo.nnz)
        np.add.at(values, position(base.row, base.col), base.data)
        self.values = as_t(values)
        self.varies = len(rows) > 0
        if self.varies:
            at = position(rows, cols)
            self.values_theta = _dense_or_sparse(
                sp.csr_array((coef, (at, ks)), shape=(coo.nnz, form.n_theta)), self.device)
        self.fixed = None if self.varies else RowOperator(self.pattern, values=self.values)

    def at(self, theta: torch.Tensor, costs: torch.Tensor | None = None) -> BatchLP:
        """The batch of LPs at θ (B, nθ); `costs` (B, n) replace the θ-map's costs."""
        theta = theta.to(self.device, torch.float64)
        c = self.c + _apply(self.c_theta, theta) if costs is None else costs
        if self.row_theta is None:
            rl, ru = self.rl, self.ru
        else:
            shift = _apply(self.row_theta, theta)
            rl, ru = self.rl - shift, self.ru - shift
        K = self.fixed or RowOperator(self.pattern,
                                      values=self.values + _apply(self.values_theta, theta))
        return BatchLP(K, c, rl, ru, self.lb, self.ub)


def _tensor_on(device: torch.device):
    def as_t(a: np.ndarray) -> torch.Tensor:
        return torch.as_tensor(np.asarray(a, dtype=float), dtype=torch.float64, device=device)

    return as_t


def _dense_or_sparse(matrix: sp.sparray, device: torch.device) -> torch.Tensor:
    """A θ-map (rows × nθ) as a torch matrix: dense when small, else sparse CSR."""
    matrix = sp.csr_array(matrix)
    if matrix.shape[0] * matrix.shape[1] <= 4_000_000:
        return torch.as_tensor(matrix.toarray(), dtype=torch.float64, device=device)
    return torch.sparse_csr_tensor(
        torch.as_tensor(matrix.indptr.astype(np.int64)),
        torch.as_tensor(matrix.indices.astype(np.int64)),
        torch.as_tensor(matrix.data, dtype=torch.float64), size=matrix.shape).to(device)


def _apply(matrix: torch.Tensor, theta: torch.Tensor) -> torch.Tensor:
    """(matrix @ θᵀ)ᵀ for a batch θ (B, nθ): (B, rows)."""
    if matrix.layout == torch.sparse_csr:
        return (matrix @ theta.T).T
    return theta @ matrix.T
