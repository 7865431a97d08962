"""The constraint matrix K (m × n) of a batch of LPs, applied to a whole batch at once.

Decision-focused learning solves one feasible set under many cost vectors (K shared by the
batch), and Gen-DFL's scenario problems change some of K's numbers per sample (one pattern,
values per sample). Both are one `RowOperator`: a fixed pattern (rows, cols) with values of
shape (nnz,) or (B, nnz). Products take and return batches, x (B, n) -> K x (B, m):

* shared, small: a dense (m, n) matrix and one matmul (what tiny LPs on a CPU want: the cost
  is the call, not the flops);
* shared, large: gathers and scatter-adds over the pattern, which touch nnz entries per
  sample and are plain kernels (no cuSPARSE workspace), so a CUDA graph can capture them;
* per sample: the same gathers and scatter-adds with the batch's own values.

The row-space Gram matrices K_S K_Sᵀ that polishing factors (`gram`) come from the same
pattern: each column j contributes K_ij K_kj to (i, k) for every pair of its entries.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
import torch

DENSE_ENTRIES = 200_000  # a shared K with at most this many m × n entries is kept dense


class RowOperator:
    """K with one sparsity pattern; `values` (nnz,) are shared by the batch, (B, nnz) are per
    sample. `scale(row, col)` folds diagonal scalings in (D_r K D_c)."""

    def __init__(self, rows: torch.Tensor, cols: torch.Tensor, values: torch.Tensor,
                 shape: tuple[int, int]) -> None:
        self.rows, self.cols, self.values = rows, cols, values
        self.m, self.n = shape
        self.shared = values.dim() == 1
        self.dense: torch.Tensor | None = None
        if self.shared and self.m * self.n <= DENSE_ENTRIES:
            self.dense = torch.zeros(shape, dtype=values.dtype, device=values.device)
            self.dense.index_put_((rows, cols), values, accumulate=True)

    @classmethod
    def from_scipy(cls, matrix: sp.sparray, *, values: np.ndarray | None = None,
                   device: torch.device | str = "cpu",
                   dtype: torch.dtype = torch.float64) -> RowOperator:
        """K from a scipy matrix; `values` (B, nnz) replaces its entries per sample, in the
        order of `matrix.tocoo()`."""
        coo = sp.coo_array(matrix)
        vals = coo.data if values is None else values
        return cls(torch.as_tensor(coo.row.astype(np.int64), device=device),
                   torch.as_tensor(coo.col.astype(np.int64), device=device),
                   torch.as_tensor(np.asarray(vals), dtype=dtype, device=device), coo.shape)

    def to(self, dtype: torch.dtype) -> RowOperator:
        return RowOperator(self.rows, self.cols, self.values.to(dtype), (self.m, self.n))

    def scaled(self, row: torch.Tensor, col: torch.Tensor) -> RowOperator:
        """D_r K D_c for diagonal scalings (m,) and (n,)."""
        factor = row[self.rows] * col[self.cols]
        return RowOperator(self.rows, self.cols, self.values * factor, (self.m, self.n))

    def abs_values(self) -> torch.Tensor:
        """|K|'s entries, the batch's largest where values are per sample (one scaling for
        the whole batch)."""
        return self.values.abs() if self.shared else self.values.abs().amax(0)

    def select(self, index: torch.Tensor) -> RowOperator:
        """The operator for a sub-batch (a no-op when values are shared)."""
        if self.shared:
            return self
        return RowOperator(self.rows, self.cols, self.values[index], (self.m, self.n))

    # ------------------------------------------------------------------ products
    def matvec(self, x: torch.Tensor) -> torch.Tensor:
        """K x for x (B, n) -> (B, m)."""
        if self.dense is not None:
            return x @ self.dense.T
        prod = x[:, self.cols] * self.values
        out = torch.zeros((x.shape[0], self.m), dtype=x.dtype, device=x.device)
        return out.index_add_(1, self.rows, prod)

    def rmatvec(self, y: torch.Tensor) -> torch.Tensor:
        """Kᵀ y for y (B, m) -> (B, n)."""
        if self.dense is not None:
            return y @ self.dense
        prod = y[:, self.rows] * self.values
        out = torch.zeros((y.shape[0], self.n), dtype=y.dtype, device=y.device)
        return out.index_add_(1, self.cols, prod)

    # ------------------------------------------------------------------ polishing
    def gram(self, column_weight: torch.Tensor) -> torch.Tensor:
        """K diag(s) Kᵀ per sample, (B, m, m), for column weights s (B, n)."""
        b = column_weight.shape[0]
        if self.dense is not None:
            k = self.dense.to(column_weight.dtype)
            return (k * column_weight[:, None, :]) @ k.T
        i, k, j, pair = self._pairs()
        vals = self.values.to(column_weight.dtype)
        prod = (vals[:, pair[0]] * vals[:, pair[1]]) if not self.shared else (
            vals[pair[0]] * vals[pair[1]])
        out = torch.zeros((b, self.m * self.m), dtype=column_weight.dtype,
                          device=column_weight.device)
        out.index_add_(1, i * self.m + k, column_weight[:, j] * prod)
        return out.reshape(b, self.m, self.m)

    def _pairs(self):
        """For each column, every ordered pair (p, q) of its pattern entries: rows (i, k),
        the column j and the entry positions (p, q), computed once."""
        cached = getattr(self, "_pair_cache", None)
        if cached is not None:
            return cached
        cols = self.cols.cpu().numpy()
        order = np.argsort(cols, kind="stable")
        counts = np.bincount(cols, minlength=self.n)
        starts = np.concatenate([[0], np.cumsum(counts)])
        per = counts[cols[order]]  # entries in the column of each sorted entry
        p_rep = np.repeat(order, per)  # entry p, repeated once per partner
        col_of = cols[p_rep]
        # partner q runs over the column's entries: offset within the column
        first = np.repeat(starts[cols[order]], per)
        within = np.arange(len(p_rep)) - np.repeat(np.cumsum(per) - per, per)
        q_rep = order[first + within]
        rows = self.rows.cpu().numpy()
        i, k, j, p, q = (torch.as_tensor(a.astype(np.int64), device=self.rows.device)
                         for a in (rows[p_rep], rows[q_rep], col_of, p_rep, q_rep))
        self._pair_cache = (i, k, j, (p, q))
        return self._pair_cache
