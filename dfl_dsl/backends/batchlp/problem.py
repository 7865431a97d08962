"""A batch of LPs with one feasible-set pattern, and its diagonal preconditioning.

    minimize   c_bᵀ x   subject to   rl_b <= K_b x <= ru_b,   lb <= x <= ub      (b = 1..B)

Costs are per sample; K and the row bounds are shared or per sample (Gen-DFL's scenario
problems move both); column bounds are shared. Rows are two-sided, as in `LinearForm`, so a
form goes in without splitting its ranged rows.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from .operator import RowOperator


@dataclass
class BatchLP:
    K: RowOperator
    c: torch.Tensor  # (B, n)
    rl: torch.Tensor  # (m,) or (B, m); -inf where a row has no lower bound
    ru: torch.Tensor  # (m,) or (B, m); +inf where a row has no upper bound
    lb: torch.Tensor  # (n,)
    ub: torch.Tensor  # (n,)

    @property
    def batch(self) -> int:
        return self.c.shape[0]

    def select(self, index: torch.Tensor) -> BatchLP:
        """The sub-batch `index`."""
        return BatchLP(self.K.select(index), self.c[index], _pick(self.rl, index),
                       _pick(self.ru, index), self.lb, self.ub)

    def to(self, dtype: torch.dtype) -> BatchLP:
        return BatchLP(self.K.to(dtype), self.c.to(dtype), self.rl.to(dtype),
                       self.ru.to(dtype), self.lb.to(dtype), self.ub.to(dtype))


def _pick(bounds: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
    """Row bounds of a sub-batch: shared ones (m,) stay as they are."""
    return bounds if bounds.dim() == 1 else bounds[index]


@dataclass
class Scaling:
    """x = D_c x̃ and y = D_r ỹ: the scaled problem has K̃ = D_r K D_c, c̃ = D_c c, column
    bounds / D_c and row bounds · D_r."""

    row: torch.Tensor  # D_r (m,)
    col: torch.Tensor  # D_c (n,)

    def apply(self, lp: BatchLP) -> BatchLP:
        return BatchLP(lp.K.scaled(self.row, self.col), lp.c * self.col, lp.rl * self.row,
                       lp.ru * self.row, lp.lb / self.col, lp.ub / self.col)

    def primal(self, x_scaled: torch.Tensor) -> torch.Tensor:
        return x_scaled * self.col

    def dual(self, y_scaled: torch.Tensor) -> torch.Tensor:
        return y_scaled * self.row

    def to_scaled(self, x: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return x / self.col, y / self.row


def precondition(K: RowOperator, ruiz_iterations: int = 10) -> Scaling:
    """The diagonal preconditioner of K (`_precondition`), kept on a shared K so a feasible
    set solved again and again is scaled once."""
    if not K.shared:
        return _precondition(K, ruiz_iterations)
    return K.derived(("precondition", ruiz_iterations),
                      lambda: _precondition(K, ruiz_iterations))


def _precondition(K: RowOperator, ruiz_iterations: int) -> Scaling:
    """Ruiz equilibration (∞-norm, `ruiz_iterations` passes) followed by one Pock–Chambolle
    pass (α = 1), the preconditioner of PDLP (Applegate et al., "Practical large-scale linear
    programming using primal-dual hybrid gradient", NeurIPS 2021, §3.3): it brings every row
    and column of K to a comparable size, which is what a first-order method's iteration
    count depends on."""
    vals = K.abs_values().to(torch.float64)
    rows, cols = K.rows, K.cols
    d_r = torch.ones(K.m, dtype=torch.float64, device=vals.device)
    d_c = torch.ones(K.n, dtype=torch.float64, device=vals.device)

    def scaled():
        return vals * d_r[rows] * d_c[cols]

    for _ in range(ruiz_iterations):
        v = scaled()
        row_max = torch.zeros(K.m, dtype=v.dtype, device=v.device).scatter_reduce_(
            0, rows, v, "amax")
        col_max = torch.zeros(K.n, dtype=v.dtype, device=v.device).scatter_reduce_(
            0, cols, v, "amax")
        d_r = d_r / torch.where(row_max > 0, row_max.sqrt(), torch.ones_like(row_max))
        d_c = d_c / torch.where(col_max > 0, col_max.sqrt(), torch.ones_like(col_max))
    v = scaled()
    row_sum = torch.zeros(K.m, dtype=v.dtype, device=v.device).index_add_(0, rows, v)
    col_sum = torch.zeros(K.n, dtype=v.dtype, device=v.device).index_add_(0, cols, v)
    d_r = d_r / torch.where(row_sum > 0, row_sum.sqrt(), torch.ones_like(row_sum))
    d_c = d_c / torch.where(col_sum > 0, col_sum.sqrt(), torch.ones_like(col_sum))
    return Scaling(d_r, d_c)


def operator_norm(K: RowOperator, iterations: int = 40, seed: int = 0) -> float:
    """‖K‖₂ (`_operator_norm`), kept on a shared K."""
    if not K.shared:
        return _operator_norm(K, iterations, seed)
    return K.derived(("norm", iterations, seed), lambda: _operator_norm(K, iterations, seed))


def _operator_norm(K: RowOperator, iterations: int, seed: int) -> float:
    """‖K‖₂ (the largest over the batch when values are per sample), by power iteration on
    KᵀK, with 5 % added: PDHG converges for τσ‖K‖² < 1 and an underestimate diverges."""
    generator = torch.Generator(device="cpu").manual_seed(seed)
    batch = 1 if K.shared else K.values.shape[0]
    v = torch.randn((batch, K.n), generator=generator, dtype=torch.float64)
    v = v.to(device=K.values.device, dtype=K.values.dtype)
    norm = torch.zeros(batch, dtype=v.dtype, device=v.device)
    for _ in range(iterations):
        v = v / v.norm(dim=1, keepdim=True).clamp_min(1e-300)
        w = K.rmatvec(K.matvec(v))
        norm = w.norm(dim=1)
        v = w
    return 1.05 * math.sqrt(max(float(norm.max()), 1e-300))


def cholesky_solve(factor: torch.Tensor, rhs: torch.Tensor) -> torch.Tensor:
    """(L Lᵀ)⁻¹ rhs for batches L (B, m, m), rhs (B, m), as two triangular solves: cuBLAS's
    batched ones, which a CUDA graph can capture (torch.cholesky_solve goes through MAGMA,
    which synchronizes with the host)."""
    half = torch.linalg.solve_triangular(factor, rhs[:, :, None], upper=False)
    return torch.linalg.solve_triangular(factor.mT, half, upper=True)[:, :, 0]
