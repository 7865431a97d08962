"""Blocks of k > 2 rows: the subproblem over O(k) by a batched manifold proximal gradient step.

For k > 2 there is no breakpoint search, so the block's subproblem

    min_{V ∈ O(k)} ψ(VZ),  ψ(Y) = <∇f_B, D> + ½ Σ_ab M_ab <D_a, (D R)_b> + λ₁‖Y‖₁,  D = Y − Z,

is solved approximately (a local answer, safeguarded). The orbit {VZ : V ∈ O(k)} has tangent
space {ΩY : Ω skew} at Y, so a step is the proximal step of ManPG (Chen, Ma, So, Zhang, SIAM J.
Optim. 2020) inside the block,

    E = argmin_{E ∈ {ΩY}} <∇ψ_s(Z), E> + (L/2)‖E‖² + λ₁‖Z + E‖₁,  L = max|eig M|·max|eig R| / 2,

by a few FISTA iterations on its dual (`_tangent_prox`), then a move along the Cayley curve
V(α) = (I − αΩ/2)⁻¹(I + αΩ/2) through ΩZ = E, α·s for α ∈ {2, 1, ½, …, 1/16} and the
solver's round step scale s (`solver._adapt`), keeping the best value of ψ. Unlike a row pair,
such a step turns many rows together and can keep an entry at zero while its row turns (a pair
rotation of rows p, q breaks a zero X_pj unless X_qj = 0 too), which is what pairs alone stall
on with L1. The block takes its answer only if ψ is below ψ(Z) (V = I); else it stays put.

Two projections onto the tangent space: for k < r a least-squares solve in Ω's k(k−1)/2
entries; for k >= r the orbit is {Y : YᵀY = ZᵀZ}, projected onto in O(kr²) through an r × r
Lyapunov equation, and the Cayley curve takes the low-rank form of Wen and Yin — so blocks of
tens of rows cost about as much per row as pairs.
"""

from __future__ import annotations

from functools import cache

import torch

from ...errors import DflError
from .kernels import matmul as mm

PROX_STEPS = 6  # dual FISTA iterations per block step; the solver doubles them on a stall
MAX_PROX_STEPS = 48
STEP_SCALES = (2.0, 1.0, 0.5, 0.25, 0.125, 0.0625)


@cache
def _gram_map(k: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(i, j) of Ω's upper triangle (m = k(k−1)/2 entries) and T (k², m²) with
    vec(G) = vec(YYᵀ)·T, G the normal matrix <E_ij Y, E_kl Y> of ω ↦ ΩY, where
    E_ij = e_i e_jᵀ − e_j e_iᵀ: <E_ij Y, E_kl Y> = δ_ik S_jl + δ_jl S_ik − δ_il S_jk − δ_jk S_il."""
    i, j = torch.triu_indices(k, k, 1)
    m = len(i)
    a, b, c, d = i[:, None], j[:, None], i[None, :], j[None, :]  # <E_ab Y, E_cd Y>
    cell = torch.arange(m * m).view(m, m)
    T = torch.zeros(k * k, m * m, dtype=torch.float64)
    for same, row, col, sign in ((a == c, b, d, 1.0), (b == d, a, c, 1.0),
                                 (a == d, b, c, -1.0), (b == c, a, d, -1.0)):
        at = same.expand(m, m)
        T.index_put_(((row * k + col).expand(m, m)[at], cell[at]),
                     torch.full((int(at.sum()),), sign, dtype=torch.float64), accumulate=True)
    return i, j, T


def _skew(vec: torch.Tensor, i, j, k: int) -> torch.Tensor:
    omega = vec.new_zeros(vec.shape[0], k, k)
    omega[:, i, j] = vec
    omega[:, j, i] = -vec
    return omega


def _tangent_prox(Z, grad, L, l1: float, normal, steps: int = PROX_STEPS) -> torch.Tensor:
    """E = argmin_{E ∈ T} <grad, E> + (L/2)‖E‖² + λ₁‖Z + E‖₁ over the tangent space T, given
    `normal` = I − P (P the orthogonal projector onto T), by FISTA on the dual: with
    u(z) = Z + P(c − Z − z), c = Z − grad/L, the dual of the L1 term is maximized over the box
    |z| <= λ₁/L, ∇ = u(z), Lipschitz 1 (P is a projection); E = u(z) − Z lies in T exactly at
    every iterate. A dual step is z ← clip(y + u(y)) = clip(Z + P(c − Z) + (I − P)y), one
    application of I − P per iteration and a handful of fused kernels."""
    scaled = -grad / L[:, None, None]
    base = scaled - normal(scaled)  # P(c − Z)
    if not l1:
        return base
    tau = (l1 / L)[:, None, None]
    shift = Z + base
    z = torch.zeros_like(Z)
    y, t = z, 1.0
    for _ in range(steps):
        z_next = torch.clamp(shift + normal(y), -tau, tau)
        t_next = 0.5 * (1.0 + (1.0 + 4.0 * t * t) ** 0.5)
        y = torch.add(z_next, z_next - z, alpha=(t - 1.0) / t_next)
        z, t = z_next, t_next
    return base - z + normal(z)


def _prox_direction(Y, grad, L, l1: float, steps: int = PROX_STEPS) -> torch.Tensor:
    """k < r: Ω (B, k, k) skew with ΩY the tangent proximal step. The projection onto {ΩY} is
    least squares in Ω's upper triangle: <E_ij Y, E> = (EYᵀ)_ij − (EYᵀ)_ji, and the normal
    matrix comes from YYᵀ (`_gram_map`; lightly regularized, as it is singular when k > r + 1)."""
    count, k, _ = Y.shape
    i, j, T = (t.to(Y.device) for t in _gram_map(k))
    m = len(i)
    S = Y @ Y.transpose(1, 2)
    G = (S.reshape(count, k * k).to(T.dtype) @ T).view(count, m, m).to(Y.dtype)
    ridge = 1e-10 * S.diagonal(dim1=1, dim2=2).sum(-1).clamp_min(1e-300)
    G = G + ridge[:, None, None] * torch.eye(m, dtype=Y.dtype, device=Y.device)
    Ginv = torch.cholesky_inverse(torch.linalg.cholesky(G))
    upper = i * k + j

    def coefficients(E):  # least-squares Ω (its upper triangle) with ΩY ≈ E
        A = E @ Y.transpose(1, 2)
        return (Ginv @ (A - A.transpose(1, 2)).reshape(count, k * k)[:, upper, None])[..., 0]

    E = _tangent_prox(Y, grad, L, l1, lambda E: E - _skew(coefficients(E), i, j, k) @ Y, steps)
    return _skew(coefficients(E), i, j, k)


def _stiefel_step(Z, grad, L, l1: float, steps: int = PROX_STEPS):
    """k >= r: the orbit {VZ} is {Y : YᵀY = W}, W = ZᵀZ, whose tangent space at Y is
    {E : YᵀE + EᵀY = 0}, projected onto by E − YΛ with WΛ + ΛW = YᵀE + EᵀY (O(kr²), not
    O(k⁶)): with W = Q diag(d) Qᵀ and K = ZQ, ZΛ = K [(KᵀEQ + (KᵀEQ)ᵀ) ⊘ (d_i + d_j)] Qᵀ
    (a pseudo-inverse where d_i + d_j ≈ 0). Returns the Cayley curve α ↦ Y(α) − Z through the
    proximal step's tangent E (α a vector of step sizes: all trials in one batch), in the
    low-rank form of Wen & Yin (Math. Program. 2013): with Ŷ = ZW^{-1/2}, Ê = EW^{-1/2},
    Ω = UVᵀ, U = [P, Ŷ], V = [Ŷ, −P], P = Ê − ½Ŷ(ŶᵀÊ): Y(α) = Z + αU(I − (α/2)VᵀU)⁻¹VᵀZ."""
    W = mm(Z.transpose(1, 2), Z)
    d, Qw = torch.linalg.eigh(W)
    d = d.clamp_min(0.0)
    Qt = Qw.transpose(1, 2)
    K, Kt = mm(Z, Qw), mm(Qt, Z.transpose(1, 2))
    den = d[:, :, None] + d[:, None, :]
    keep = den > 1e-12 * d.amax(-1, keepdim=True)[..., None]
    inv = torch.where(keep, 1.0 / torch.where(keep, den, torch.ones_like(den)),
                      torch.zeros_like(den))

    def normal(E):  # E − P(E) = ZΛ
        S = mm(mm(Kt, E), Qw)
        return mm(K, mm((S + S.transpose(1, 2)) * inv, Qt))

    E = _tangent_prox(Z, grad, L, l1, normal, steps)
    small = d <= 1e-12 * d.amax(-1, keepdim=True)
    root = torch.where(small, torch.zeros_like(d), 1.0 / torch.sqrt(torch.where(small,
                                                                         torch.ones_like(d), d)))
    W_half_inv = mm(Qw, root[:, :, None] * Qt)
    Yh, Eh = mm(Z, W_half_inv), mm(E, W_half_inv)
    P = Eh - mm(0.5 * Yh, mm(Yh.transpose(1, 2), Eh))
    U = torch.cat([P, Yh], -1)
    V = torch.cat([Yh, -P], -1)
    VU, VZ = mm(V.transpose(1, 2), U), mm(V.transpose(1, 2), Z)
    eye = torch.eye(VU.shape[-1], dtype=Z.dtype, device=Z.device)

    def curve(alpha):  # (S,) -> w (B, 2r, S, r) with Y(α_s) − Z = U·w[:, :, s]
        a = alpha[:, None, None, None]
        w = a * torch.linalg.solve(eye - 0.5 * a * VU, VZ.expand(len(alpha), *VZ.shape))
        return w.permute(1, 2, 0, 3)
    return U, curve


def solve_blocks(model, blocks: torch.Tensor, l1: float, l0: float,
                 nonneg: bool, step: float = 1.0,
                 prox_steps: int = PROX_STEPS) -> tuple[torch.Tensor, torch.Tensor]:
    """New rows (B, k, r) and the subproblem change (B,) for blocks (B, k) of row indices;
    `prox_steps` dual FISTA iterations for the tangent proximal step."""
    if l0 or nonneg:
        raise DflError("blocks of k > 2 rows take h = 0 or λ‖X‖₁; use k = 2 for nnz and X >= 0")
    Z, Gf, M, R = model.block_terms(blocks)
    k = Z.shape[1]
    eye = torch.eye(k, dtype=Z.dtype, device=Z.device)
    r_top = 1.0 if R is None else float(torch.linalg.eigvalsh(R).abs().max())
    L = 0.5 * (torch.linalg.eigvalsh(M).abs().amax(-1) * r_top).clamp_min(1e-12)

    def right(A):
        return A if R is None else A @ R

    start = l1 * Z.abs().sum((-1, -2)) if l1 else Z.new_zeros(Z.shape[0])  # ψ(Z)
    alphas = step * torch.tensor(STEP_SCALES, dtype=Z.dtype, device=Z.device)
    if k >= Z.shape[2]:
        U, curve = _stiefel_step(Z, Gf, L, l1, prox_steps)
        w = curve(alphas)
    else:
        omega = _prox_direction(Z, Gf, L, l1, prox_steps)
        half = 0.5 * alphas[:, None, None, None] * omega
        U, w = None, (torch.linalg.solve(eye - half, (eye + half) @ Z) - Z).permute(1, 2, 0, 3)
    # every trial at once, with the moves D_s = U·w_s (U = I for k < r): ψ(Z + D) − ψ(Z) is
    # <UᵀG, w> + ½<UᵀMU·w, wR> + λ₁(‖Z + Uw‖₁ − ‖Z‖₁), the smooth part in the 2r × r factors
    count, m, trials, r = w.shape
    flat = w.reshape(count, m, trials * r)
    Ut = None if U is None else U.transpose(1, 2)
    g, H = (Gf, M) if U is None else (mm(Ut, Gf), mm(mm(Ut, M), U))
    values = (g[:, :, None] * w).sum((1, 3)) + 0.5 * (
        mm(H, flat).view(count, m, trials, r) * right(w)).sum((1, 3))
    Y = Z[:, :, None] + (w if U is None else mm(U, flat).view(count, k, trials, r))
    if l1:
        values = values + l1 * Y.abs().sum((1, 3))
    # the first trial (in STEP_SCALES' order) with the least ψ below ψ(Z), else Z
    values = torch.where(torch.isnan(values), torch.full_like(values, float("inf")), values)
    best_v, at = values.min(1)
    better = best_v < start
    pick = Y.gather(2, at[:, None, None, None].expand(count, k, 1, r))[:, :, 0]
    best_Y = torch.where(better[:, None, None], pick, Z)
    return best_Y, torch.where(better, best_v, start) - start
