"""Blocks of k > 2 rows: the subproblem over O(k) by a small Riemannian solve.

For k > 2 there is no breakpoint search, so the subproblem is solved approximately (a local
answer, safeguarded). Each block minimizes φ(V) + h_μ(V·Z) over the orthogonal group, batched
over blocks: Riemannian gradient steps along the skew-symmetric direction Ω = A − Aᵀ,
A = Vᵀ∇ψ(V), retracted by the Cayley transform (V stays orthogonal to rounding), with per-block
backtracking, where h_μ is the Huber smoothing of λ₁‖·‖₁. The block takes its answer only if
the true subproblem value (the unsmoothed h) is below that of V = I; else it stays put.
"""

from __future__ import annotations

import torch

from ...errors import DflError
from .pair import h_rows


def _huber(v: torch.Tensor, mu: float) -> torch.Tensor:
    a = v.abs()
    return torch.where(a <= mu, 0.5 * v * v / mu + 0.5 * mu, a).sum((-1, -2))


def solve_blocks(model, blocks: torch.Tensor, l1: float, l0: float, nonneg: bool,
                 iters: int = 60, mu: float = 1e-3) -> tuple[torch.Tensor, torch.Tensor]:
    """New rows (B, k, r) and the subproblem change (B,) for blocks (B, k) of row indices."""
    if l0 or nonneg:
        raise DflError("blocks of k > 2 rows take h = 0 or λ‖X‖₁; use k = 2 for nnz and X >= 0")
    Z, Gf, M, R = model.block_terms(blocks)
    count, k, _ = Z.shape
    eye = torch.eye(k, dtype=Z.dtype, device=Z.device).expand(count, k, k)

    def smooth(V):
        D = V @ Z - Z
        DR = D if R is None else D @ R
        return (Gf * D).sum((-1, -2)) + 0.5 * (M * (D @ DR.transpose(-1, -2))).sum((-1, -2))

    def psi(V):
        return smooth(V) + (l1 * _huber(V @ Z, mu) if l1 else 0.0)

    V = eye.clone()
    step = torch.ones(count, dtype=Z.dtype, device=Z.device)
    for _ in range(iters):
        Vg = V.detach().requires_grad_(True)
        value = psi(Vg)
        (grad,) = torch.autograd.grad(value.sum(), Vg)
        A = V.transpose(-1, -2) @ grad
        omega = A - A.transpose(-1, -2)  # V·exp(−τΩ) descends along the Riemannian gradient
        value = value.detach()
        for _ in range(20):
            half = 0.5 * step[:, None, None] * omega
            trial = V @ torch.linalg.solve(eye + half, eye - half)
            better = psi(trial) < value
            if better.all():
                break
            step = torch.where(better, step, 0.5 * step)
        V = torch.where(better[:, None, None], trial, V)
        step = torch.where(better, 2.0 * step, step)
    new = V @ Z
    delta = smooth(V) + h_rows(new.flatten(1), l1, 0.0, False) - h_rows(Z.flatten(1), l1, 0.0,
                                                                        False)
    stay = ~(delta < 0)
    return torch.where(stay[:, None, None], Z, new), torch.where(stay, torch.zeros_like(delta),
                                                                 delta)
