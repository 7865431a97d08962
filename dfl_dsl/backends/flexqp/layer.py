"""Differentiating FlexQP's solution (the `flexqp` layer).

`implicit` (default): at the solution, the active rows S (nonzero dual, not violated) and the
rows V whose duals sit at ±μ (violated: their dual is constant) make the KKT system

    P x + q + Aᵀy = 0,     A_S x = b_S

an identity in the data, so one linear solve with the symmetric matrix K = [[P, A_Sᵀ], [A_S, 0]]
gives every gradient: K [u; v] = [∂L/∂x; 0], then ∂L/∂q = −u, ∂L/∂b_S = v, ∂L/∂A = −(y uᵀ + v xᵀ),
∂L/∂P = −½(u xᵀ + x uᵀ) (Amos & Kolter, "OptNet", ICML 2017, §3, on the active set; batched,
with the inactive rows held at v = 0 so every problem has one size).

`unroll`: backpropagate through the last `unroll_iters` ADMM iterations, run with autograd from
the converged (detached) state — the cheap alternative FlexQP trains with.
"""

from __future__ import annotations

import torch
from torch import nn

from ...compile.bridges import linear_form
from ...errors import DflError
from ...instance import Instance
from ...predicted import as_given, stack_params
from .admm import initial_params, solve, step
from .forms import DenseForm
from .iterates import FLOAT32_EPS, Settings, State
from .kkt import Factors, Schur, SchurFactors, solve_active
from .linsys import LinearSystem
from .problem import QPBatch


def active_rows(qp: QPBatch, x: torch.Tensor, y: torch.Tensor, tol: float) -> tuple:
    """(active, upper): rows held at a bound by a nonzero dual, and which bound."""
    scale = 1 + y.abs().amax(-1, keepdim=True)
    violated = qp.violation(x) > tol * (1 + qp.Ax(x).abs())
    active = (y.abs() > tol * scale) & ~violated
    return active, y > 0


def kkt_gradients(qp: QPBatch, x: torch.Tensor, y: torch.Tensor, g: torch.Tensor, tol: float,
                  refine: int = 6, wanted: tuple[str, ...] = ("P", "q", "A", "lo", "hi"),
                  work: dict | None = None, factors: Factors | SchurFactors | None = None,
                  ) -> dict[str, torch.Tensor]:
    """∂L/∂(P, q, A, lo, hi) (those `wanted`) from ∂L/∂x = g: K [u; v] = [g; 0] on the active
    rows (`kkt.solve_active`, refined until the residual is at rounding level — two or three
    rounds in float64 — and at most `refine` rounds). `work`: LinearSystem's buffers (outside
    autograd); `factors`: polishing's factorizations, used when their rows are these."""
    active, upper = active_rows(qp, x, y, tol)
    if factors is not None and bool(factors.have.any()):
        # a polished problem's rows are the ones its (exact) point was solved on: rows whose
        # dual is positive but below `tol` stay active, as they are, and its factor serves
        active = torch.where(factors.have.unsqueeze(-1), factors.active, active)
    schur = Schur.of(qp, work)
    lin = factors.lookup(active, work) if factors is not None else None
    u, v, _ = solve_active(qp, active, g, torch.zeros_like(y), refine, work,
                           stop_at_rounding=True, lin=lin, schur=schur)
    grads = {"q": -u, "lo": torch.where(upper, 0.0, v), "hi": torch.where(upper, v, 0.0)}
    if "A" in wanted:
        grads["A"] = -(y.unsqueeze(-1) * u.unsqueeze(1) + v.unsqueeze(-1) * x.unsqueeze(1))
    if "P" in wanted:
        grads["P"] = -0.5 * (u.unsqueeze(-1) * x.unsqueeze(1) + x.unsqueeze(-1) * u.unsqueeze(1))
    return grads


class _FlexQPFn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, P, q, A, lo, hi, runner):
        qp = QPBatch(P, q, A, lo, hi)
        result = runner.run(qp)
        ctx.save_for_backward(P, q, A, lo, hi, result.x, result.y)
        ctx.runner = runner
        ctx.factors = result.extra.get("factors")
        return result.x

    @staticmethod
    def backward(ctx, g):
        P, q, A, lo, hi, x, y = ctx.saved_tensors
        if x.shape[-1] == 0:  # no variables (the model's sets are empty): x depends on nothing
            return (None,) * 6
        names = ("P", "q", "A", "lo", "hi")
        wanted = tuple(n for n, need in zip(names, ctx.needs_input_grad, strict=False) if need)
        runner = ctx.runner
        work = None if torch.is_grad_enabled() else runner.work
        # in the rows scaled as the forward solved them: its factorizations (polishing's, the
        # rows' outer products) serve here too. x is the same for any row scaling D, so the
        # gradients in b and A are D times those in the scaled rows
        scaled, D = QPBatch(P, q, A, lo, hi).row_scaled()
        grads = kkt_gradients(scaled, x, y / D, g, runner.active_tol, wanted=wanted, work=work,
                              factors=ctx.factors)
        for name in ("lo", "hi", "A"):
            if name in grads:
                grads[name] = grads[name] * (D if name != "A" else D.unsqueeze(-1))
        out = []
        for name, value in zip(names, (P, q, A, lo, hi), strict=True):
            grad = grads[name] if name in wanted else None
            out.append(grad.sum(0) if grad is not None and value.dim() < grad.dim() else grad)
        return (*out, None)


class Runner:
    """Forward solves with warm starts from the previous call (same batch size). A problem of
    the batch that is unbounded has no decision to return or to differentiate: the call raises
    a DflError naming it (`last_result` has every problem's status)."""

    def __init__(self, policy, settings: Settings, warm_start: bool) -> None:
        self.policy = policy
        self.settings = settings
        self.warm_start = warm_start
        self.active_tol = max(1e-7, 100 * settings.eps_abs)
        self.last = None
        self.last_result = None
        self.work: dict = {}  # the factorizations' buffers, reused by every call

    def run(self, qp: QPBatch):
        warm = self.last if self.warm_start and self.last is not None \
            and self.last.x.shape == qp.q.shape else None
        result = solve(qp, self.policy, self.settings, warm, self.work)
        self.last_result = result
        unbounded = [i for i, status in enumerate(result.status) if status == "unbounded"]
        if unbounded:
            raise DflError(f"{len(unbounded)} of the batch's {qp.batch} QPs are unbounded (first:"
                           f" {', '.join(map(str, unbounded[:10]))}): the objective falls without"
                           " bound along a direction the constraints allow, so there is no "
                           "decision to return",
                           hint="bound the variables, or keep the predicted params where the "
                           "objective is bounded")
        self.last = State(result.x, result.z, result.y)
        return result


def unrolled(qp: QPBatch, runner: Runner, iters: int) -> torch.Tensor:
    """x after `iters` ADMM iterations with autograd, from the converged state."""
    with torch.no_grad():
        result = runner.run(QPBatch(*(t.detach() for t in (qp.P, qp.q, qp.A, qp.lo, qp.hi))))
    scaled, D = qp.row_scaled()
    s = runner.settings
    params = initial_params(scaled, s)
    params.mu = (result.mu / D).detach()
    lin = LinearSystem(scaled, params.rho, s.sigma)
    state = State(result.x.detach(), (result.z * D).detach(), (result.y / D).detach())
    for _ in range(iters):
        state = step(scaled, state, params, lin, s.sigma)
    return state.x


class FlexQPLayer(nn.Module):
    """Predicted params (leading batch axis) -> the QP's decisions, differentiable."""

    def __init__(self, inst: Instance, *, diff: str = "implicit", policy="deep",
                 eps: float | None = None, max_iter: int = 20_000, warm_start: bool = True,
                 unroll_iters: int = 50, dtype: torch.dtype = torch.float64) -> None:
        super().__init__()
        from .backend import policy_named

        if diff not in ("implicit", "unroll"):
            raise DflError(f"unknown differentiation `{diff}`", hint="use implicit or unroll")
        if inst.klass.name not in ("QP", "LP"):
            raise DflError(f"the flexqp layer takes QP and LP models, not {inst.klass.name}")
        self.inst = inst
        self.form = linear_form(inst)
        if not inst.predicted:
            raise DflError("the model has no predicted param to differentiate with respect to")
        self.diff = diff
        self.dtype = dtype
        self.unroll_iters = unroll_iters
        self._policy_name = policy
        self._policy_for = policy_named
        if eps is None:  # float64: 1e-8; float32 can't reach that (see FLOAT32_EPS)
            eps = 1e-8 if dtype == torch.float64 else FLOAT32_EPS
        self.settings = Settings(eps_abs=eps, eps_rel=eps, max_iter=max_iter)
        self.warm_start = warm_start
        self._dense: dict = {}
        self._runners: dict = {}
        self.register_buffer("index", torch.as_tensor(inst.predicted_index(), dtype=torch.long))

    def _parts(self, device):
        key = str(device)
        if key not in self._dense:
            self._dense[key] = DenseForm(self.form, dtype=self.dtype, device=device)
            policy = self._policy_for(self._policy_name, device)
            self._runners[key] = Runner(policy, self.settings, self.warm_start)
        return self._dense[key], self._runners[key]

    @property
    def last_result(self):
        """The last forward solve's Result (status, iterations, violations) on any device."""
        results = [r.last_result for r in self._runners.values() if r.last_result is not None]
        return results[-1] if results else None

    def forward(self, *args, **kwargs) -> torch.Tensor:
        theta_pred = stack_params(self.inst, args, kwargs).to(self.dtype)
        dense, runner = self._parts(theta_pred.device)
        theta = theta_pred.new_zeros((theta_pred.shape[0], self.form.n_theta))
        theta = theta.index_copy(1, self.index.to(theta.device), theta_pred)
        qp = dense.batch(theta)
        if self.diff == "unroll":
            x = unrolled(qp, runner, self.unroll_iters)
        else:
            x = _FlexQPFn.apply(qp.P, qp.q, qp.A, qp.lo, qp.hi, runner)
        return as_given(self.inst, args, kwargs, x[:, : self.form.n_model])
