"""A batched primal–dual interior-point method for small LPs (a few hundred rows).

A first-order method's iteration count depends on the data and on how close its start is;
an interior-point method converges in 15–40 iterations whatever the costs, each one a Newton
step on a (B, m, m) system. For the small LPs of decision-focused learning benchmarks (a 5×5
grid's 25 rows) that system costs less than the Python call that launches it, so the whole
batch is solved in a fixed, small number of steps — the route OptNet took for batched QPs
(Amos & Kolter, "OptNet: Differentiable optimization as a layer in neural networks", ICML
2017). The method is Mehrotra's predictor–corrector (Mehrotra, "On the implementation of a
primal-dual interior point method", SIAM J. Optim. 1992) for bounded variables (Wright,
"Primal-Dual Interior-Point Methods", SIAM 1997, ch. 10 and 11), on

    minimize cᵀx   subject to   Kx - s = 0,   l <= x <= u,   rl <= s <= ru,

with a slack per row (fixed where the row is an equality) and a small dual regularization so
that rank-deficient rows (a network's redundant balance row) still factor. Its iterates tend
to the analytic centre of the optimal face — strictly complementary — which is what makes
the polishing step's identification reliable (`polish`).
"""

from __future__ import annotations

import torch

from .problem import BatchLP, cholesky_solve

STEP = 0.999  # fraction of the step to the boundary
REGULARIZE = 1e-12  # dual regularization of the normal equations, relative to their diagonal
THETA_MAX = 1e8  # cap of a column's Θ (a free column's, which no bound limits)
FROZEN = 1e-13  # a sample this close stops moving (its complementarity would underflow)


class InteriorPoint:
    """The IPM's state for a batch; `step()` runs one predictor–corrector iteration and
    returns each sample's relative KKT error; `pair()` is the current (x, y).

    Each sample is solved in units where its largest bound and its largest cost are 1
    (x = β x', y = γ y'): the start (a unit away from each bound, unit bound duals) and the
    regularization then mean the same for every sample. Everything that doesn't change
    between steps (bounds, masks, scales) is computed here once: a step on a small LP costs
    its number of operations, not their size."""

    def __init__(self, lp: BatchLP) -> None:
        self.lp, self.n, self.m = lp, lp.K.n, lp.K.m
        b = lp.batch
        lo = torch.cat([lp.lb.expand(b, -1), lp.rl.expand(b, -1)], 1)
        hi = torch.cat([lp.ub.expand(b, -1), lp.ru.expand(b, -1)], 1)
        finite = torch.where(torch.isfinite(torch.cat([lo, hi], 1)),
                             torch.cat([lo, hi], 1).abs(), 0.0)
        self.beta = finite.amax(1, keepdim=True).clamp_min(1.0)
        self.gamma = lp.c.abs().amax(1, keepdim=True).clamp_min(1.0)
        lo, hi = lo / self.beta, hi / self.beta
        fixed = torch.isfinite(lo) & (lo == hi)
        self.has_lo = torch.isfinite(lo) & ~fixed
        self.has_hi = torch.isfinite(hi) & ~fixed
        self.fixed = fixed
        dtype = lo.dtype
        self.lo_f, self.hi_f = self.has_lo.to(dtype), self.has_hi.to(dtype)
        self.movable = (~fixed).to(dtype)
        # finite stand-ins where a side has no bound (its dual stays 0 there)
        self.lo = torch.where(self.has_lo, lo, 0.0)
        self.hi = torch.where(self.has_hi, hi, 0.0)
        mid = torch.where(self.has_lo & self.has_hi, (self.lo + self.hi) / 2,
                          torch.where(self.has_lo, self.lo + 1.0,
                                      torch.where(self.has_hi, self.hi - 1.0, 0.0)))
        self.z = torch.where(fixed, lo, mid)
        self.vl, self.vu = self.lo_f.clone(), self.hi_f.clone()
        self.y = torch.zeros((b, self.m), dtype=dtype, device=lo.device)
        self.c = lp.c / self.gamma
        self.cz = torch.cat([self.c, torch.zeros_like(self.y)], 1)
        self.count = (self.lo_f.sum(1) + self.hi_f.sum(1)).clamp_min(1.0)
        self.scale_b = 1 + torch.where(torch.isfinite(torch.cat([lo, hi], 1)),
                                       torch.cat([lo, hi], 1).abs(), 0.0).amax(1)
        self.scale_c = 1 + self.cz.abs().amax(1)
        self.last = torch.full((b,), torch.inf, dtype=dtype, device=lo.device)
        self.steps = torch.zeros(b, dtype=torch.int64, device=lo.device)

    def pair(self) -> tuple[torch.Tensor, torch.Tensor]:
        """(x, y) in the problem's own units."""
        return self.z[:, : self.n] * self.beta, self.y * self.gamma

    def step(self) -> torch.Tensor:
        n, K = self.n, self.lp.K
        z, y, vl, vu = self.z, self.y, self.vl, self.vu
        r_p = z[:, n:] - K.matvec(z[:, :n])
        r_d = (self.cz - torch.cat([K.rmatvec(y), -y], 1) - vl + vu) * self.movable
        wl = torch.where(self.has_lo, z - self.lo, 1.0)
        wu = torch.where(self.has_hi, self.hi - z, 1.0)
        iwl, iwu = 1.0 / wl, 1.0 / wu
        mu = ((wl * vl).sum(1) + (wu * vu).sum(1)) / self.count
        theta = self.movable / (vl * iwl + vu * iwu + 1.0 / THETA_MAX)
        solve = self._normal_equations(theta)

        def direction(r_l: torch.Tensor, r_u: torch.Tensor):
            # r_l, r_u vanish where a side has no bound (its dual and rhs are 0 there)
            rho = r_d - r_l * iwl + r_u * iwu
            t_rho = theta * rho
            dy = solve(r_p + K.matvec(t_rho[:, :n]) - t_rho[:, n:])
            dz = theta * (torch.cat([K.rmatvec(dy), -dy], 1) - rho)
            return dz, dy, (r_l - vl * dz) * iwl, (r_u + vu * dz) * iwu

        dz, _, dvl, dvu = direction(-wl * vl, -wu * vu)
        a_p, a_d = self._lengths(wl, wu, dz, dvl, dvu)
        mu_aff = (((wl + a_p * dz) * (vl + a_d * dvl)).sum(1)
                  + ((wu - a_p * dz) * (vu + a_d * dvu)).sum(1)) / self.count
        target = (((mu_aff / mu.clamp_min(1e-300)) ** 3).clamp(0.0, 1.0) * mu)[:, None]
        dz, dy, dvl, dvu = direction((target - wl * vl - dz * dvl) * self.lo_f,
                                     (target - wu * vu + dz * dvu) * self.hi_f)
        a_p, a_d = self._lengths(wl, wu, dz, dvl, dvu)
        moving = (self.last > FROZEN)[:, None]
        a_p = torch.where(moving, (STEP * a_p).clamp_max(1.0), 0.0)
        a_d = torch.where(moving, (STEP * a_d).clamp_max(1.0), 0.0)
        # in place: the state tensors stay the ones a captured CUDA graph reads and writes
        z.add_(a_p * dz * self.movable)
        y.add_(a_d * dy)
        vl.add_(a_d * dvl)
        vu.add_(a_d * dvu)
        self.steps.add_(moving[:, 0].to(self.steps.dtype))
        relative = torch.maximum(torch.maximum(r_p.abs().amax(1) / self.scale_b,
                                               r_d.abs().amax(1) / self.scale_c),
                                 mu * self.count / (1 + (self.c * z[:, :n]).sum(1).abs()))
        self.last.copy_(torch.where(moving[:, 0], relative, self.last))
        return self.last

    def _normal_equations(self, theta: torch.Tensor):
        """A Θ Aᵀ = K Θ_x Kᵀ + Θ_s, factored once per iteration with a dual regularization
        of 1e-12 of each row's own diagonal: enough for rank-deficient rows (a network's
        redundant balance row) to factor, too little to bias the step (a regularization
        relative to the largest row stalled the primal residual on rows with small Θ)."""
        theta_x, theta_s = theta[:, : self.n], theta[:, self.n :]
        gram = self.lp.K.gram(theta_x)
        diag = gram.diagonal(dim1=1, dim2=2)
        diag.add_(theta_s)
        # Θ spans many orders of magnitude near the end: Cholesky is indifferent to a
        # diagonal scaling, a regularization relative to the largest row is not (plus a
        # floor for empty rows)
        diag.add_(REGULARIZE * diag + 1e-14 * diag.amax(1, keepdim=True).clamp_min(1e-300))
        factor, _ = torch.linalg.cholesky_ex(gram)

        def solve(rhs: torch.Tensor) -> torch.Tensor:
            return cholesky_solve(factor, rhs)

        return solve

    def _lengths(self, wl, wu, dz, dvl, dvu) -> tuple[torch.Tensor, torch.Tensor]:
        """The largest primal and dual steps (B, 1), up to 1/STEP, keeping slacks and bound
        duals nonnegative (a side without a bound has a zero dual and direction)."""
        inf = torch.inf
        to_lo = torch.where(self.has_lo & (dz < 0), wl / -dz, inf)
        to_hi = torch.where(self.has_hi & (dz > 0), wu / dz, inf)
        a_p = torch.minimum(to_lo, to_hi).amin(1, keepdim=True).clamp_max(1.0 / STEP)
        d_lo = torch.where(dvl < 0, self.vl / -dvl, inf)
        d_hi = torch.where(dvu < 0, self.vu / -dvu, inf)
        a_d = torch.minimum(d_lo, d_hi).amin(1, keepdim=True).clamp_max(1.0 / STEP)
        return a_p, a_d

