"""What a FlexQP solve carries: its settings, the ADMM parameters and iterates of a batch, the
residuals OSQP's test reads, the problems still running and the outcome per problem."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

import torch

from .kkt import Factors, SchurFactors
from .linsys import LinearSystem
from .problem import QPBatch

# the tightest residual tolerance float32 iterates reach reliably (its rounding is ~1.2e-7
# relative); float64's defaults (1e-8, 1e-9) are below it, and such a solve never converges
FLOAT32_EPS = 1e-5


@dataclass
class Settings:
    eps_abs: float = 1e-6
    eps_rel: float = 1e-6
    max_iter: int = 20_000
    # residuals are tested every few iterations (fewer device syncs and ops); 6 puts the
    # second check, where the Schur path polishes everything, after the policy's first update
    check_every: int = 6
    sigma: float = 1e-6
    rho: float = 0.1  # OSQP's default; equality rows get 1e3 × (OSQP's rule)
    alpha: float = 1.6
    mu: float = 1e3  # penalty on the row-scaled constraints
    mu_growth: float = 10.0
    mu_max: float = 1e10
    # OSQP's tolerance of its certificate of dual infeasibility (eps_dual_inf, §3.4)
    eps_unbounded: float = 1e-4
    time_limit: float | None = None
    # OSQP's polishing (§4.2), tried while iterating: at a check where a running problem's
    # guess of its active rows (from its iterates) has nearly settled, solve its QP on those
    # rows exactly, correct the guess by up to `polish_rounds` − 1 active-set steps, and stop
    # the problem once a polished point passes the residual test (kkt.polish_on, kkt.corrected)
    polish: bool = True
    polish_changes: int = 2  # try when at most this many rows changed their guess in a check
    polish_rounds: int = 4
    # on the Schur path (shared definite P: a round is cheap) every running problem is tried
    # once at the second check whatever its guess, with more rounds (beyond the papers)
    schur_rounds: int = 8
    # the guess: row i at its upper bound when yᵢ > 0 and uᵢ − aᵢᵀx < w·yᵢ (OSQP's guess is
    # w = 1 with the slack z in place of Ax; measured here, w = 0.3 with Ax needs fewer
    # active-set corrections — beyond the papers)
    guess_weight: float = 0.3


@dataclass
class Params:
    """The ADMM parameters a policy sets: per-constraint ρ and μ, per-problem α. `mu_ref` is
    the μ that `solve` raises for exactness; a policy sets μ within a decade above it (so it
    can't grow μ without bound on an infeasible problem, where the duals chase μ)."""

    rho: torch.Tensor  # (B, m)
    mu: torch.Tensor  # (B, m)
    alpha: torch.Tensor  # (B, 1)
    mu_ref: torch.Tensor  # (B, m)
    # (B, 1): may the policy set μ? Not once a problem showed violated rows: the least *L1*
    # violation needs one μ for every row (unequal μ would minimize a weighted violation)
    mu_free: torch.Tensor

    def select(self, keep: torch.Tensor) -> Params:
        return Params(self.rho[keep], self.mu[keep], self.alpha[keep], self.mu_ref[keep],
                      self.mu_free[keep])


@dataclass
class State:
    x: torch.Tensor  # (B, n)
    z: torch.Tensor  # (B, m)
    y: torch.Tensor  # (B, m)

    def select(self, keep: torch.Tensor) -> State:
        return State(self.x[keep], self.z[keep], self.y[keep])


@dataclass
class Result:
    x: torch.Tensor
    z: torch.Tensor
    y: torch.Tensor  # duals of the original (unscaled) rows: Px + q + Aᵀy = 0
    # per problem: optimal | relaxed | unbounded; at an iteration or time limit, feasible
    # (the point meets the rows within tolerance) or time_limit (it may not)
    status: list[str]
    iterations: torch.Tensor  # (B,) iterations each problem needed
    violation: torch.Tensor  # (B, m) dist(Ax, [l, u]) in the original units
    r_prim: torch.Tensor
    r_dual: torch.Tensor
    mu: torch.Tensor  # final μ (original units)
    extra: dict = field(default_factory=dict)


class Residuals(NamedTuple):
    """OSQP's primal/dual residuals at a state (∞-norms, per problem) and the parts they are
    made of: the convergence test, the violations and the policy's features share them."""

    Ax: torch.Tensor  # (B, m)
    prim: torch.Tensor  # (B, m) |Ax − z|
    r_prim: torch.Tensor  # (B,) ‖Ax − z‖∞
    r_dual: torch.Tensor  # (B,) ‖Px + q + Aᵀy‖∞
    scale_prim: torch.Tensor  # (B,) max(‖Ax‖∞, ‖z‖∞)
    scale_dual: torch.Tensor  # (B,) max(‖Px‖∞, ‖Aᵀy‖∞, ‖q‖∞)

    @classmethod
    def of(cls, qp: QPBatch, s: State, Ax: torch.Tensor | None = None) -> Residuals:
        """The residuals at s (`Ax`: A s.x when already at hand)."""
        Ax = qp.Ax(s.x) if Ax is None else Ax
        Px, ATy = qp.Px(s.x), qp.ATy(s.y)
        prim = (Ax - s.z).abs()
        # the scales as one max over the concatenated vectors: fewer ops, the same values
        scale_dual = torch.cat([Px, ATy, qp.q], -1).abs().amax(-1)
        return cls(Ax, prim, prim.amax(-1), (Px + qp.q + ATy).abs().amax(-1),
                   torch.cat([Ax, s.z], -1).abs().amax(-1), scale_dual)

    def tolerances(self, eps_abs: float, eps_rel: float) -> tuple[torch.Tensor, torch.Tensor]:
        """OSQP's (ε_prim, ε_dual) per problem."""
        return eps_abs + eps_rel * self.scale_prim, eps_abs + eps_rel * self.scale_dual


@dataclass
class Running:
    """The problems still iterating: their (row-scaled) data, ADMM state and parameters, the
    factorization for their ρ (None: to be made), where each sits in the full batch, and the
    total violation at its last μ increase."""

    qp: QPBatch
    state: State
    params: Params
    lin: LinearSystem | None
    index: torch.Tensor
    last_violation: torch.Tensor
    guess: torch.Tensor | None = None  # (B, m) int8 active-row guess at the last check
    tried: torch.Tensor | None = None  # (B,) polished once without success
    warm: bool = False  # started from an earlier solution (its first guess is worth a try)
    x_check: torch.Tensor | None = None  # (B, n) x at the last check

    def select(self, keep: torch.Tensor) -> Running:
        return Running(self.qp.select(keep), self.state.select(keep), self.params.select(keep),
                       self.lin.select(keep) if self.lin is not None else None,
                       self.index[keep], self.last_violation[keep],
                       self.guess[keep] if self.guess is not None else None,
                       self.tried[keep] if self.tried is not None else None, self.warm,
                       self.x_check[keep] if self.x_check is not None else None)


@dataclass
class Outcome:
    """Per problem of the full batch: the final state, μ, iterations, and status flags."""

    state: State
    mu: torch.Tensor
    iterations: torch.Tensor
    done: torch.Tensor
    relaxed: torch.Tensor
    unbounded: torch.Tensor
    polished: int = 0
    factors: Factors | SchurFactors | None = None  # polishing's, for the backward pass

    @classmethod
    def empty(cls, like: State, mu: torch.Tensor, max_iter: int) -> Outcome:
        B, device = like.x.shape[0], like.x.device
        flags = torch.zeros(B, dtype=torch.bool, device=device)
        return cls(State(torch.empty_like(like.x), torch.empty_like(like.z),
                         torch.empty_like(like.y)), torch.empty_like(mu),
                   torch.full((B,), max_iter, dtype=torch.long, device=device), flags,
                   flags.clone(), flags.clone())

    def store(self, run: Running, rows, it: int | None = None, relaxed=None) -> None:
        at = run.index[rows]
        out, s = self.state, run.state
        out.x[at], out.z[at], out.y[at] = s.x[rows], s.z[rows], s.y[rows]
        self.mu[at] = run.params.mu[rows]
        if it is not None:
            self.done[at] = True
            self.iterations[at] = it
            self.relaxed[at] = relaxed
