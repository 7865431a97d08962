"""The constraint matrix K (m × n) of a batch of LPs, applied to a whole batch at once.

Decision-focused learning solves one feasible set under many cost vectors (K shared by the
batch), and Gen-DFL's scenario problems change some of K's numbers per sample (one pattern,
values per sample). Both are one `RowOperator`: a fixed pattern (rows, cols) with values of
shape (nnz,) or (B, nnz). Products take and return batches, x (B, n) -> K x (B, m):

* small (m·n entries at most DENSE_ENTRIES): dense, (m, n) shared or (B, m, n) per sample,
  and one matmul (what small LPs want: the cost is the call, not the flops);
* large: gathers and scatter-adds over the pattern, which touch nnz entries per sample and
  are plain kernels (no cuSPARSE workspace), so a CUDA graph can capture them.

The row-space Gram matrices K_S K_Sᵀ that the interior-point method and polishing factor
(`gram`) come from the same pattern: each column j contributes K_ij K_kj to (i, k) for every
pair of its entries. Operators derived from one another (a sub-batch, a scaling, a dtype)
share one `Pattern`, so what depends on the pattern alone is computed once.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
import torch

DENSE_ENTRIES = 200_000  # K with at most this many m × n entries is kept dense
DENSE_BATCH_ENTRIES = 50_000_000  # and per-sample dense forms up to this many in all


class Pattern:
    """Where K's entries are — (rows, cols) and the shape — and what follows from that alone
    (the column pairs of the Gram matrix), computed once for every operator on it."""

    def __init__(self, rows: torch.Tensor, cols: torch.Tensor, shape: tuple[int, int]) -> None:
        self.rows, self.cols = rows, cols
        self.m, self.n = shape
        self.linear = rows * self.n + cols
        self._pairs = None

    def pairs(self):
        """For each column, every ordered pair (p, q) of its entries: rows (i, k), the column
        j and the entry positions (p, q)."""
        if self._pairs is None:
            cols = self.cols.cpu().numpy()
            order = np.argsort(cols, kind="stable")
            counts = np.bincount(cols, minlength=self.n)
            starts = np.concatenate([[0], np.cumsum(counts)])
            per = counts[cols[order]]  # entries in the column of each sorted entry
            p_rep = np.repeat(order, per)  # entry p, repeated once per partner
            # partner q runs over the column's entries: its offset within the column
            first = np.repeat(starts[cols[order]], per)
            within = np.arange(len(p_rep)) - np.repeat(np.cumsum(per) - per, per)
            q_rep = order[first + within]
            rows = self.rows.cpu().numpy()
            self._pairs = tuple(torch.as_tensor(a.astype(np.int64), device=self.rows.device)
                                for a in (rows[p_rep], rows[q_rep], cols[p_rep], p_rep, q_rep))
        return self._pairs


class RowOperator:
    """K on a `Pattern`; `values` (nnz,) are shared by the batch, (B, nnz) are per sample."""

    def __init__(self, rows: torch.Tensor | Pattern, cols: torch.Tensor | None = None,
                 values: torch.Tensor | None = None,
                 shape: tuple[int, int] | None = None) -> None:
        self.pattern = rows if isinstance(rows, Pattern) else Pattern(rows, cols, shape)
        self.values = values
        self.m, self.n = self.pattern.m, self.pattern.n
        self.shared = values.dim() == 1
        self.dense: torch.Tensor | None = None
        batch = 1 if self.shared else values.shape[0]
        if self.m * self.n <= DENSE_ENTRIES and batch * self.m * self.n <= DENSE_BATCH_ENTRIES:
            flat = torch.zeros((batch, self.m * self.n), dtype=values.dtype, device=values.device)
            flat.index_add_(1, self.pattern.linear, values.reshape(batch, -1))
            dense = flat.reshape(batch, self.m, self.n)
            self.dense = dense[0] if self.shared else dense
        self._derived: dict = {}

    @property
    def rows(self) -> torch.Tensor:
        return self.pattern.rows

    @property
    def cols(self) -> torch.Tensor:
        return self.pattern.cols

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

    def with_values(self, values: torch.Tensor) -> RowOperator:
        """The operator with other values on the same pattern."""
        return RowOperator(self.pattern, values=values)

    def to(self, dtype: torch.dtype) -> RowOperator:
        """K in another dtype (a shared K is converted once, not once per solve)."""
        if self.values.dtype == dtype:
            return self
        return self.derived(("to", dtype), lambda: self.with_values(self.values.to(dtype)))

    def scaled(self, row: torch.Tensor, col: torch.Tensor) -> RowOperator:
        """D_r K D_c for diagonal scalings (m,) and (n,); a shared K keeps the last one made,
        for as long as it is asked with the very same scaling tensors."""
        kept = self._derived.get("scaled")
        if kept is not None and kept[0] is row and kept[1] is col:
            return kept[2]
        made = self.with_values(self.values * (row[self.rows] * col[self.cols]))
        if self.shared:
            self._derived["scaled"] = (row, col, made)
        return made

    def derived(self, key, make):
        """A shared K's derived operators are made once: every solve with the same feasible
        set reuses them. Per-sample values change with every batch: nothing is kept."""
        if not self.shared:
            return make()
        if key not in self._derived:
            self._derived[key] = make()
        return self._derived[key]

    def abs_values(self) -> torch.Tensor:
        """|K|'s entries, the batch's largest where values are per sample (one scaling for
        the whole batch)."""
        return self.values.abs() if self.shared else self.values.abs().amax(0)

    def select(self, index: torch.Tensor) -> RowOperator:
        """The operator for a sub-batch (itself when values are shared)."""
        if self.shared:
            return self
        return self.with_values(self.values[index])

    # ------------------------------------------------------------------ products
    def matvec(self, x: torch.Tensor) -> torch.Tensor:
        """K x for x (B, n) -> (B, m)."""
        if self.dense is not None:
            return x @ self.dense.T if self.shared else (self.dense @ x[:, :, None])[:, :, 0]
        prod = x[:, self.cols] * self.values
        out = torch.zeros((x.shape[0], self.m), dtype=x.dtype, device=x.device)
        return out.index_add_(1, self.rows, prod)

    def rmatvec(self, y: torch.Tensor) -> torch.Tensor:
        """Kᵀ y for y (B, m) -> (B, n)."""
        if self.dense is not None:
            return y @ self.dense if self.shared else (y[:, None, :] @ self.dense)[:, 0, :]
        prod = y[:, self.rows] * self.values
        out = torch.zeros((y.shape[0], self.n), dtype=y.dtype, device=y.device)
        return out.index_add_(1, self.cols, prod)

    def gram(self, column_weight: torch.Tensor) -> torch.Tensor:
        """K diag(s) Kᵀ per sample, (B, m, m), for column weights s (B, n)."""
        if self.dense is not None:
            k = self.dense.to(column_weight.dtype)
            weighted = k * column_weight[:, None, :]
            return weighted @ (k.T if self.shared else k.mT)
        i, k, j, p, q = self.pattern.pairs()
        vals = self.values.to(column_weight.dtype)
        prod = vals[p] * vals[q] if self.shared else vals[:, p] * vals[:, q]
        out = torch.zeros((column_weight.shape[0], self.m * self.m), dtype=column_weight.dtype,
                          device=column_weight.device)
        out.index_add_(1, i * self.m + k, column_weight[:, j] * prod)
        return out.reshape(-1, self.m, self.m)
