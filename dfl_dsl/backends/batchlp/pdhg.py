"""Restarted PDHG for a batch of LPs, every sample with its own primal weight and restarts.

The iteration is PDLP's (Applegate et al., "Practical large-scale linear programming using
primal-dual hybrid gradient", NeurIPS 2021) for  min cᵀx  s.t.  rl <= Kx <= ru, l <= x <= u:

    x⁺ = proj_[l,u](x - τ (c - Kᵀy))
    y⁺ = max(v + σ rl, 0) + min(v + σ ru, 0),   v = y - σ K(2x⁺ - x)

with τ = η/ω, σ = ηω, η < 1/‖K‖ and ω the primal weight. At a solution, y_i > 0 holds a row
at its lower bound, y_i < 0 at its upper bound, and r = c - Kᵀy > 0 a column at l.

Restarts follow cuPDLP (Lu & Yang, "cuPDLP.jl: A GPU implementation of restarted primal-dual
hybrid gradient for linear programming in Julia", 2023): every `check_every` iterations the
current and the averaged iterate are scored by the weighted KKT error; the better one becomes
the restart point when it has fallen below 0.2 of the last restart's error, or below 0.8 and
stopped falling, or when a sample has not restarted for 36 % of the iterations so far. A
restart resets the average and moves ω towards ‖Δy‖/‖Δx‖ (PDLP's primal-weight update).

Everything is branch-free per sample (masks and `torch.where`), and the state lives in fixed
tensors updated in place, so a block of iterations can be captured in a CUDA graph once and
replayed (`Iterations`).
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import torch

from .graphs import Captured
from .problem import BatchLP

SUFFICIENT, NECESSARY, ARTIFICIAL = 0.2, 0.8, 0.36


@dataclass
class State:
    """The iterates of a batch, (B, n) and (B, m), and the per-sample restart bookkeeping."""

    x: torch.Tensor
    y: torch.Tensor
    kx: torch.Tensor  # K x, reused by the next iteration's extrapolation
    x_sum: torch.Tensor
    y_sum: torch.Tensor
    count: torch.Tensor  # iterations averaged since the last restart (B,)
    x_last: torch.Tensor  # the last restart point
    y_last: torch.Tensor
    kkt_last: torch.Tensor  # its weighted KKT error (B,)
    kkt_prev: torch.Tensor  # the previous check's candidate error (B,)
    omega: torch.Tensor  # primal weight (B,)
    since: torch.Tensor  # iterations since the last restart (B,)
    total: torch.Tensor  # iterations run (scalar tensor, so a captured graph counts too)

    def select(self, index: torch.Tensor) -> State:
        """The state of a sub-batch (the scalar iteration count is shared)."""
        return State(**{f.name: getattr(self, f.name) if f.name == "total"
                        else getattr(self, f.name)[index] for f in fields(self)})


def start(lp: BatchLP, x0: torch.Tensor, y0: torch.Tensor) -> State:
    """The state at (x0, y0) (projected on the bounds), ω from the data's norms as PDLP does:
    ‖c‖ / ‖finite row bounds‖ where both are nonzero."""
    x = torch.clamp(x0, lp.lb, lp.ub)
    y = y0.clone()
    bounds = torch.where(torch.isfinite(lp.rl), lp.rl, 0.0).expand(lp.batch, -1)
    b_norm = bounds.norm(dim=1)
    c_norm = lp.c.norm(dim=1)
    omega = torch.where((b_norm > 1e-10) & (c_norm > 1e-10), c_norm / b_norm.clamp_min(1e-10),
                        torch.ones_like(c_norm))
    zeros = torch.zeros(lp.batch, dtype=x.dtype, device=x.device)
    state = State(x=x, y=y, kx=lp.K.matvec(x), x_sum=torch.zeros_like(x),
                  y_sum=torch.zeros_like(y), count=zeros.clone(), x_last=x.clone(),
                  y_last=y.clone(), kkt_last=zeros.clone(), kkt_prev=zeros.clone(),
                  omega=omega, since=zeros.clone(),
                  total=torch.zeros((), dtype=x.dtype, device=x.device))
    state.kkt_last = kkt(lp, x, y, omega)[0]
    state.kkt_prev = state.kkt_last.clone()
    return state


def step(lp: BatchLP, s: State, eta: float) -> None:
    """One PDHG iteration, in place."""
    tau = (eta / s.omega)[:, None]
    sigma = (eta * s.omega)[:, None]
    x_new = torch.clamp(s.x - tau * (lp.c - lp.K.rmatvec(s.y)), lp.lb, lp.ub)
    kx_new = lp.K.matvec(x_new)
    v = s.y - sigma * (2.0 * kx_new - s.kx)
    y_new = torch.clamp_min(v + sigma * lp.rl, 0.0) + torch.clamp_max(v + sigma * lp.ru, 0.0)
    s.x.copy_(x_new)
    s.kx.copy_(kx_new)
    s.y.copy_(y_new)
    s.x_sum.add_(x_new)
    s.y_sum.add_(y_new)
    s.count.add_(1.0)
    s.since.add_(1.0)
    s.total.add_(1.0)


def kkt(lp: BatchLP, x: torch.Tensor, y: torch.Tensor, omega: torch.Tensor
        ) -> tuple[torch.Tensor, torch.Tensor]:
    """(weighted KKT error, relative KKT error) per sample.

    Weighted (cuPDLP's restart score): sqrt(ω²‖p‖² + ‖d‖²/ω² + gap²). Relative (what says how
    close a sample is): the largest of ‖p‖/(1 + ‖b‖), ‖d‖/(1 + ‖c‖) and
    |gap|/(1 + |primal| + |dual|), with p the row violation, d the reduced costs no finite
    bound can pay for, and the gap between the primal and the (finite part of the) dual
    objective."""
    kx = lp.K.matvec(x)
    p = kx - torch.clamp(kx, lp.rl, lp.ru)
    r = lp.c - lp.K.rmatvec(y)
    lb_finite, ub_finite = torch.isfinite(lp.lb), torch.isfinite(lp.ub)
    d = torch.where((r > 0) & ~lb_finite, r, 0.0) + torch.where((r < 0) & ~ub_finite, r, 0.0)
    rl = torch.where(torch.isfinite(lp.rl), lp.rl, 0.0)
    ru = torch.where(torch.isfinite(lp.ru), lp.ru, 0.0)
    lb = torch.where(lb_finite, lp.lb, 0.0)
    ub = torch.where(ub_finite, lp.ub, 0.0)
    primal = (lp.c * x).sum(1)
    dual = ((y.clamp_min(0) * rl).sum(1) + (y.clamp_max(0) * ru).sum(1)
            + (r.clamp_min(0) * lb).sum(1) + (r.clamp_max(0) * ub).sum(1))
    gap = (primal - dual).abs()
    p_norm, d_norm = p.norm(dim=1), d.norm(dim=1)
    weighted = torch.sqrt(omega**2 * p_norm**2 + d_norm**2 / omega**2 + gap**2)
    b_norm = torch.maximum(rl.abs(), ru.abs()).expand_as(kx).norm(dim=1)
    relative = torch.maximum(torch.maximum(p_norm / (1 + b_norm),
                                           d_norm / (1 + lp.c.norm(dim=1))),
                             gap / (1 + primal.abs() + dual.abs()))
    return weighted, relative


def check_restart(lp: BatchLP, s: State) -> torch.Tensor:
    """Score the current and the averaged iterate, restart the samples that qualify (in
    place), and return the relative KKT error of each sample's better iterate."""
    count = s.count.clamp_min(1.0)[:, None]
    x_avg, y_avg = s.x_sum / count, s.y_sum / count
    w_cur, rel_cur = kkt(lp, s.x, s.y, s.omega)
    w_avg, rel_avg = kkt(lp, x_avg, y_avg, s.omega)
    use_avg = (w_avg < w_cur)[:, None]
    x_c = torch.where(use_avg, x_avg, s.x)
    y_c = torch.where(use_avg, y_avg, s.y)
    w_c = torch.minimum(w_avg, w_cur)
    rel_c = torch.where(use_avg[:, 0], rel_avg, rel_cur)
    restart = ((w_c <= SUFFICIENT * s.kkt_last)
               | ((w_c <= NECESSARY * s.kkt_last) & (w_c > s.kkt_prev))
               | (s.since >= ARTIFICIAL * s.total))
    dx = (x_c - s.x_last).norm(dim=1)
    dy = (y_c - s.y_last).norm(dim=1)
    moved = restart & (dx > 1e-10) & (dy > 1e-10)
    ratio = torch.where(moved, dy / dx.clamp_min(1e-10), s.omega)
    omega = torch.where(moved, torch.exp(0.5 * torch.log(ratio) + 0.5 * torch.log(s.omega)),
                        s.omega)
    r = restart[:, None]
    s.x.copy_(torch.where(r, x_c, s.x))
    s.y.copy_(torch.where(r, y_c, s.y))
    s.kx.copy_(lp.K.matvec(s.x))
    s.x_last.copy_(torch.where(r, x_c, s.x_last))
    s.y_last.copy_(torch.where(r, y_c, s.y_last))
    s.x_sum.copy_(torch.where(r, 0.0, s.x_sum))
    s.y_sum.copy_(torch.where(r, 0.0, s.y_sum))
    s.count.copy_(torch.where(restart, 0.0, s.count))
    s.since.copy_(torch.where(restart, 0.0, s.since))
    s.kkt_last.copy_(torch.where(restart, w_c, s.kkt_last))
    s.kkt_prev.copy_(w_c)
    s.omega.copy_(omega)
    return rel_c


class Iterations:
    """`check_every` PDHG iterations and one restart check, as one call — on CUDA one CUDA
    graph replay (`Captured`) instead of a few hundred kernel launches, which is what small
    LPs cost on a GPU. The state is updated in place; `run()` returns each sample's relative
    KKT error."""

    def __init__(self, lp: BatchLP, state: State, eta: float, check_every: int,
                 graphs: bool = True) -> None:
        self.lp, self.state, self.eta, self.check_every = lp, state, eta, check_every
        self.block = Captured(self._block, graphs and state.x.is_cuda)

    @property
    def captured(self) -> bool:
        return self.block.captured

    def _block(self) -> torch.Tensor:
        for _ in range(self.check_every):
            step(self.lp, self.state, self.eta)
        return check_restart(self.lp, self.state)

    def run(self) -> torch.Tensor:
        return self.block()
