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

from dataclasses import dataclass

import torch

from .problem import BatchLP

STEP = 0.99  # fraction of the step to the boundary
REGULARIZE = 1e-12  # dual regularization of the normal equations, relative to their diagonal
REFINE = 3  # refinement steps of each normal-equations solve
THETA_MAX = 1e8  # cap of a column's Θ (a free column's, which no bound limits)
FROZEN = 1e-13  # a sample this close stops moving (its complementarity would underflow)


@dataclass
class _Bounds:
    lo: torch.Tensor  # (B, N) over z = [x; s]
    hi: torch.Tensor
    has_lo: torch.Tensor  # finite and not fixed
    has_hi: torch.Tensor
    fixed: torch.Tensor
    free: torch.Tensor


def _bounds(lp: BatchLP, beta: torch.Tensor) -> _Bounds:
    b = lp.batch
    lo = torch.cat([lp.lb.expand(b, -1), lp.rl.expand(b, -1)], 1) / beta
    hi = torch.cat([lp.ub.expand(b, -1), lp.ru.expand(b, -1)], 1) / beta
    fixed = torch.isfinite(lo) & (lo == hi)
    has_lo = torch.isfinite(lo) & ~fixed
    has_hi = torch.isfinite(hi) & ~fixed
    return _Bounds(lo, hi, has_lo, has_hi, fixed, ~has_lo & ~has_hi & ~fixed)


class InteriorPoint:
    """The IPM's state for a batch; `step()` runs one predictor–corrector iteration and
    returns each sample's relative KKT error; `pair()` is the current (x, y).

    Each sample is solved in units where its largest bound and its largest cost are 1
    (x = β x', y = γ y'): the start (a unit away from each bound, unit bound duals) and the
    regularization then mean the same for every sample."""

    def __init__(self, lp: BatchLP) -> None:
        self.lp, self.n, self.m = lp, lp.K.n, lp.K.m
        bounds = torch.cat([lp.lb.expand(lp.batch, -1), lp.rl.expand(lp.batch, -1),
                            lp.ub.expand(lp.batch, -1), lp.ru.expand(lp.batch, -1)], 1)
        finite = torch.where(torch.isfinite(bounds), bounds.abs(), 0.0)
        self.beta = finite.amax(1, keepdim=True).clamp_min(1.0)
        self.gamma = lp.c.abs().amax(1, keepdim=True).clamp_min(1.0)
        self.bd = bd = _bounds(lp, self.beta)
        one = torch.ones_like(bd.lo)
        mid = torch.where(bd.has_lo & bd.has_hi, (bd.lo + bd.hi) / 2,
                          torch.where(bd.has_lo, bd.lo + one,
                                      torch.where(bd.has_hi, bd.hi - one, 0.0 * one)))
        self.z = torch.where(bd.fixed, bd.lo, mid)
        self.vl = bd.has_lo.to(one.dtype)
        self.vu = bd.has_hi.to(one.dtype)
        self.y = torch.zeros((lp.batch, self.m), dtype=one.dtype, device=one.device)
        self.c = lp.c / self.gamma
        self.cz = torch.cat([self.c, torch.zeros_like(self.y)], 1)
        self.count = (bd.has_lo.sum(1) + bd.has_hi.sum(1)).clamp_min(1).to(one.dtype)
        self.last = torch.full((lp.batch,), torch.inf, dtype=one.dtype, device=one.device)

    def keep(self, rows: torch.Tensor) -> None:
        """Drop every sample but `rows` (the finished ones leave the batch)."""
        for name in ("z", "vl", "vu", "y", "c", "cz", "count", "beta", "gamma", "last"):
            setattr(self, name, getattr(self, name)[rows])
        self.bd = _Bounds(*(t[rows] for t in (self.bd.lo, self.bd.hi, self.bd.has_lo,
                                              self.bd.has_hi, self.bd.fixed, self.bd.free)))
        self.lp = self.lp.select(rows)

    def pair(self) -> tuple[torch.Tensor, torch.Tensor]:
        """(x, y) in the problem's own units."""
        return self.z[:, : self.n] * self.beta, self.y * self.gamma

    def _residuals(self):
        bd, lp = self.bd, self.lp
        x, s = self.z[:, : self.n], self.z[:, self.n :]
        r_p = s - lp.K.matvec(x)
        aty = torch.cat([lp.K.rmatvec(self.y), -self.y], 1)
        r_d = torch.where(bd.fixed, 0.0, self.cz - aty - self.vl + self.vu)
        wl = torch.where(bd.has_lo, self.z - bd.lo, 1.0)
        wu = torch.where(bd.has_hi, bd.hi - self.z, 1.0)
        return r_p, r_d, wl, wu

    def step(self) -> torch.Tensor:
        bd = self.bd
        r_p, r_d, wl, wu = self._residuals()
        comp = (wl * self.vl).sum(1) + (wu * self.vu).sum(1)
        mu = comp / self.count
        theta = torch.where(bd.fixed, 0.0, 1.0 / (self.vl / wl + self.vu / wu
                                                   + 1.0 / THETA_MAX))
        solve = self._normal_equations(theta)

        def direction(r_l: torch.Tensor, r_u: torch.Tensor):
            rho = r_d - r_l / wl + r_u / wu
            t_rho = theta * rho
            rhs = r_p + self.lp.K.matvec(t_rho[:, : self.n]) - t_rho[:, self.n :]
            dy = solve(rhs)
            dz = theta * (torch.cat([self.lp.K.rmatvec(dy), -dy], 1) - rho)
            dvl = torch.where(bd.has_lo, (r_l - self.vl * dz) / wl, 0.0)
            dvu = torch.where(bd.has_hi, (r_u + self.vu * dz) / wu, 0.0)
            return dz, dy, dvl, dvu

        dz, _, dvl, dvu = direction(-wl * self.vl, -wu * self.vu)
        a_p, a_d = self._lengths(wl, wu, dz, dvl, dvu)
        mu_aff = (((wl + a_p * dz) * (self.vl + a_d * dvl)).sum(1)
                  + ((wu - a_p * dz) * (self.vu + a_d * dvu)).sum(1)) / self.count
        sigma = ((mu_aff / mu.clamp_min(1e-300)) ** 3).clamp(0.0, 1.0)[:, None]
        target = sigma * mu[:, None]
        r_l = torch.where(bd.has_lo, target - wl * self.vl - dz * dvl, 0.0)
        r_u = torch.where(bd.has_hi, target - wu * self.vu + dz * dvu, 0.0)
        dz, dy, dvl, dvu = direction(r_l, r_u)
        a_p, a_d = self._lengths(wl, wu, dz, dvl, dvu)
        a_p, a_d = (STEP * a_p).clamp_max(1.0), (STEP * a_d).clamp_max(1.0)
        moving = (self.last > FROZEN)[:, None]
        self.z = torch.where(moving & ~bd.fixed, self.z + a_p * dz, self.z)
        self.y = torch.where(moving, self.y + a_d * dy, self.y)
        self.vl = torch.where(moving, self.vl + a_d * dvl, self.vl)
        self.vu = torch.where(moving, self.vu + a_d * dvu, self.vu)
        self.last = torch.where(self.last > FROZEN, self._relative(r_p, r_d, mu), self.last)
        return self.last

    def _normal_equations(self, theta: torch.Tensor):
        """A Θ Aᵀ = K Θ_x Kᵀ + Θ_s, factored once per iteration with a small dual
        regularization (rank-deficient rows), and solved with iterative refinement against
        the unregularized product, so the regularization doesn't bias the step."""
        theta_x, theta_s = theta[:, : self.n], theta[:, self.n :]
        gram = self.lp.K.gram(theta_x)
        gram.diagonal(dim1=1, dim2=2).add_(theta_s)
        # each row regularized relative to its own diagonal (Θ spans many orders of
        # magnitude near the end; Cholesky is indifferent to a diagonal scaling, a
        # regularization relative to the largest row is not), plus a floor for empty rows
        diag = torch.diagonal(gram, dim1=1, dim2=2).clone()
        floor = 1e-14 * diag.amax(1, keepdim=True).clamp_min(1e-300)
        gram.diagonal(dim1=1, dim2=2).add_(REGULARIZE * diag + floor)
        factor, _ = torch.linalg.cholesky_ex(gram)
        K = self.lp.K

        def solve(rhs: torch.Tensor) -> torch.Tensor:
            dy = torch.cholesky_solve(rhs[:, :, None], factor)[:, :, 0]
            for _ in range(REFINE):
                residual = rhs - K.matvec(theta_x * K.rmatvec(dy)) - theta_s * dy
                dy = dy + torch.cholesky_solve(residual[:, :, None], factor)[:, :, 0]
            return dy

        return solve

    def _lengths(self, wl, wu, dz, dvl, dvu) -> tuple[torch.Tensor, torch.Tensor]:
        """The largest primal and dual steps (B, 1), up to 1/STEP, keeping slacks and bound
        duals nonnegative."""
        bd = self.bd
        big = torch.full_like(dz, float("inf"))
        to_lo = torch.where(bd.has_lo & (dz < 0), -wl / dz, big)
        to_hi = torch.where(bd.has_hi & (dz > 0), wu / dz, big)
        a_p = torch.minimum(to_lo, to_hi).amin(1, keepdim=True).clamp_max(1.0 / STEP)
        d_lo = torch.where(dvl < 0, -self.vl / dvl, big)
        d_hi = torch.where(dvu < 0, -self.vu / dvu, big)
        a_d = torch.minimum(d_lo, d_hi).amin(1, keepdim=True).clamp_max(1.0 / STEP)
        return a_p, a_d

    def _relative(self, r_p, r_d, mu) -> torch.Tensor:
        bd = self.bd
        scale_b = torch.where(torch.isfinite(bd.lo), bd.lo.abs(), 0.0).amax(1)
        scale_b = torch.maximum(scale_b, torch.where(torch.isfinite(bd.hi), bd.hi.abs(),
                                                     0.0).amax(1))
        primal = (self.c * self.z[:, : self.n]).sum(1)
        return torch.maximum(torch.maximum(r_p.abs().amax(1) / (1 + scale_b),
                                           r_d.abs().amax(1) / (1 + self.cz.abs().amax(1))),
                             mu * self.count / (1 + primal.abs()))
