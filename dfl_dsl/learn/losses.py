"""Decision-focused losses. Each takes predicted params θ̂ (B, k) and the truth
(θ (B, k), w* (B, n), z* (B,)) and works in the canonical minimized cost space ĉ = c + Cθ θ̂
of the oracle, so minimize and maximize models share one implementation.

Notation: w(c) = argmin_w cᵀw over the feasible set, z*(c) = cᵀw(c), c the true cost.

Every loss asks the oracle (`Oracle.decisions`) and nothing else for decisions; `keys` (the
samples' indices in the training set, which the trainer passes) let a warm-starting oracle
start each sample's solve from its previous one.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from ..errors import DflError
from .loss_settings import TASK_LOSSES
from .oracle import Oracle

REDUCTIONS = ("mean", "sum", "none")


def quadratic_losses() -> list[str]:
    """The `--loss` names that train a QP (their classes set `takes_quadratic`)."""
    from .loss_registry import LOSSES

    return [name for name, cls in LOSSES.items() if getattr(cls, "takes_quadratic", False)]


LOSS_ARGS = ("theta_hat", "theta", "w_true", "z_true")


def same_batch(module: nn.Module, args: tuple, kwargs: dict) -> None:
    """Every loss takes θ̂ and θ (B, k), w* (B, n) and z* (B,): a batch size that differs
    between them (or θ̂ shaped otherwise than θ) is named here with every shape, instead of
    torch's broadcasting error from deep inside the loss. (A forward pre-hook of each loss.)"""
    given = {**dict(zip(LOSS_ARGS, args, strict=False)),  # (keys may follow)
             **{k: v for k, v in kwargs.items() if k in LOSS_ARGS}}
    shapes = {name: tuple(v.shape) if hasattr(v, "shape") else np.shape(v)
              for name in LOSS_ARGS if (v := given.get(name)) is not None}
    leads = {shape[0] if shape else None for shape in shapes.values()}
    hat, theta = shapes.get("theta_hat"), shapes.get("theta")
    if len(leads) > 1 or (hat is not None and theta is not None and hat != theta):
        listed = ", ".join(f"{name} {list(shape)}" for name, shape in shapes.items())
        raise ValueError(f"{type(module).__name__}: theta_hat and theta must have one shape "
                         f"(B, k), and w_true and z_true the same batch size B; got {listed}")


class _DFLLoss(nn.Module):
    # whether the loss is defined for a convex QP's objective f(ĉ, w) = ĉᵀw + ½wᵀPw (those
    # that only need w(ĉ) and f's value); the others are built on a linear ĉᵀw (SPO+'s bound,
    # the pool losses' comparisons)
    takes_quadratic = False

    def __init__(self, inst_or_oracle, reduction: str = "mean") -> None:
        super().__init__()
        self.register_forward_pre_hook(same_batch, with_kwargs=True)
        is_oracle = isinstance(inst_or_oracle, Oracle)
        self.oracle = inst_or_oracle if is_oracle else Oracle(inst_or_oracle)
        if self.oracle.is_qp and not self.takes_quadratic:
            from .loss_registry import LOSSES

            model = self.oracle.inst.model
            name = next((f"--loss {key}" for key, cls in LOSSES.items() if cls is type(self)),
                        type(self).__name__)
            raise DflError(
                f"this loss ({name}) needs a linear objective; the model's objective is "
                "quadratic",
                model.objective.pos if model.objective is not None else None,
                hint="for a QP train with --loss " + " | ".join(quadratic_losses()),
                filename=model.filename, source=model.source)
        if reduction not in REDUCTIONS:
            raise ValueError("reduction must be mean, sum or none")
        self.reduction = reduction

    def _reduce(self, loss: torch.Tensor) -> torch.Tensor:
        if self.reduction == "mean":
            return loss.mean()
        if self.reduction == "sum":
            return loss.sum()
        return loss


# ---------------------------------------------------------------------- SPO+
class _SPOPlusFn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, c_hat, c, w_true, z_true, oracle, keys):
        w = oracle.decisions(2 * c_hat - c, keys=keys, slot="spo+").to(c_hat)
        loss = -(2 * c_hat - c).mul(w).sum(-1) + 2 * (c_hat * w_true).sum(-1) - z_true
        ctx.save_for_backward(w_true - w)
        return loss

    @staticmethod
    def backward(ctx, grad):
        (diff,) = ctx.saved_tensors
        return 2 * diff * grad.unsqueeze(-1), None, None, None, None, None


class SPOPlus(_DFLLoss):
    """SPO+ (Elmachtoub & Grigas, "Smart 'Predict, then Optimize'", Management Science 2022):

        ℓ(ĉ, c) = -min_w (2ĉ - c)ᵀw + 2ĉᵀw*(c) - z*(c),   ∂ℓ/∂ĉ = 2(w*(c) - w(2ĉ - c)).

    A convex upper bound of the regret; one solve per sample.
    """

    def forward(self, theta_hat, theta, w_true, z_true, keys=None):
        c_hat = self.oracle.costs(theta_hat)
        c = self.oracle.costs(theta).detach()
        z = (c * w_true).sum(-1)  # z* in the canonical space without its constant
        del z_true
        return self._reduce(_SPOPlusFn.apply(c_hat, c, w_true.to(c_hat), z.to(c_hat),
                                             self.oracle, keys))


# ---------------------------------------------------------------------- perturbation
class _Perturbed:
    """Monte-Carlo perturbations ĉ + σZ, Z ~ N(0, I), with a private generator (seeded)."""

    def __init__(self, n_samples: int, sigma: float, seed: int) -> None:
        if n_samples < 1 or sigma <= 0:
            raise ValueError("n_samples must be >= 1 and sigma > 0")
        self.n_samples, self.sigma = n_samples, sigma
        self.generator = torch.Generator().manual_seed(seed)

    def sample(self, c_hat: torch.Tensor) -> torch.Tensor:
        """Z (B, S, n), drawn in float32: PyEPO draws in the predictions' dtype, float32 for a
        torch model, so the same seed gives PyEPO's perturbations (torch's float32 and
        float64 normal streams differ entirely)."""
        b, n = c_hat.shape
        z = torch.randn((b, self.n_samples, n), generator=self.generator, dtype=torch.float32)
        return z.to(c_hat)

    def solve(self, oracle: Oracle, c_hat: torch.Tensor, noise: torch.Tensor, keys, slot: str):
        """Decisions under each perturbation; perturbation k of sample i is named
        i·S + k, so a warm start pairs it with the same draw slot of its last visit."""
        perturbed = c_hat.detach().unsqueeze(1) + self.sigma * noise
        b, s, n = perturbed.shape
        if keys is not None:
            keys = (torch.as_tensor(keys, dtype=torch.int64)[:, None] * s
                    + torch.arange(s)).flatten()
        w = oracle.decisions(perturbed.reshape(b * s, n), keys=keys, slot=slot)
        return perturbed, w.to(c_hat).reshape(b, s, n)


class _PFYLFn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, c_hat, w_true, module, keys):
        noise = module.perturb.sample(c_hat)
        perturbed, sols = module.perturb.solve(module.oracle, c_hat, noise, keys, "pfyl")
        expected = sols.mean(1)
        oracle = module.oracle
        f = oracle.value(perturbed, sols).mean(1)
        loss = oracle.value(c_hat, w_true) - f
        ctx.save_for_backward(w_true - expected)
        return loss

    @staticmethod
    def backward(ctx, grad):
        (diff,) = ctx.saved_tensors
        return diff * grad.unsqueeze(-1), None, None, None


class PFYL(_DFLLoss):
    """Perturbed Fenchel–Young loss (Berthet et al., "Learning with differentiable perturbed
    optimizers", NeurIPS 2020), for a minimization oracle:

        ℓ(ĉ, w*) = ĉᵀw* - E_Z[min_w (ĉ + σZ)ᵀw] >= 0,   ∂ℓ/∂ĉ = w* - E_Z[w(ĉ + σZ)].

    For a convex QP the objective's ½wᵀPw joins both terms (the Fenchel–Young loss of the
    regularizer Ω(w) = ½wᵀPw + the feasible set's indicator; Blondel, Martins & Niculae,
    JMLR 2020); the gradient is the same.
    """

    takes_quadratic = True

    def __init__(self, inst, n_samples: int = 10, sigma: float = 1.0, seed: int = 135,
                 reduction: str = "mean") -> None:
        super().__init__(inst, reduction)
        self.perturb = _Perturbed(n_samples, sigma, seed)

    def forward(self, theta_hat, theta, w_true, z_true, keys=None):
        c_hat = self.oracle.costs(theta_hat)
        return self._reduce(_PFYLFn.apply(c_hat, w_true.to(c_hat), self, keys))


class _PerturbedOptFn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, c_hat, module, keys, baseline=True, cached=False):
        """`module` has `.perturb` and `.oracle`; `baseline`: the leave-one-out baseline in
        the backward pass; `cached`: answer the perturbed costs from the oracle's pool."""
        perturb = module.perturb
        noise = perturb.sample(c_hat)
        if cached:
            sols = module.oracle.pool_decisions(c_hat.detach().unsqueeze(1)
                                                + perturb.sigma * noise).to(c_hat)
        else:
            _, sols = perturb.solve(module.oracle, c_hat, noise, keys, "dpo")
        ctx.save_for_backward(sols, noise)
        ctx.sigma, ctx.baseline = perturb.sigma, baseline
        return sols.mean(1)

    @staticmethod
    def backward(ctx, grad):
        sols, noise = ctx.saved_tensors
        # Stein: ∂E[w(ĉ+σZ)]/∂ĉ = E[w(ĉ+σZ) Zᵀ]/σ; each draw's "reward" is gradᵀw_s
        reward = torch.einsum("bsn,bn->bs", sols, grad)
        s = reward.shape[1]
        if ctx.baseline and s > 1:
            # leave-one-out baseline: r_s - mean_{t≠s} r_t = S/(S-1)·(r_s - r̄); unbiased, as
            # E[Z] = 0 and the other draws are independent of Z_s
            reward = (reward - reward.mean(1, keepdim=True)) * (s / (s - 1))
        return torch.einsum("bs,bsn->bn", reward, noise) / (s * ctx.sigma), None, None, None, None


def task_loss(w_bar: torch.Tensor, w_true: torch.Tensor, c: torch.Tensor, kind: str,
              oracle: Oracle | None = None):
    """A smoothed decision's loss per sample: its regret f(c, w̄) - f(c, w*) (the oracle's
    objective; cᵀ(w̄ - w*) without one), or its l1 / mse distance to w* (mean over the
    entries, as torch's L1Loss / MSELoss)."""
    w_true = w_true.to(w_bar)
    diff = w_bar - w_true
    if kind == "l1":
        return diff.abs().mean(-1)
    if kind == "mse":
        return (diff**2).mean(-1)
    if oracle is None or not oracle.is_qp:
        return (c.to(w_bar) * diff).sum(-1)  # (the difference first: exact 0 at w*)
    return oracle.value(c.to(w_bar), w_bar) - oracle.value(c.to(w_bar), w_true)


class DPO(_DFLLoss):
    """Differentiable perturbed optimizer (Berthet et al., NeurIPS 2020): the smoothed decision
    w̄(ĉ) = E_Z[w(ĉ + σZ)], differentiated by Stein's lemma, trained on a task loss of w̄:

        regret (default)  ℓ = cᵀw̄(ĉ) - z*(c)
        l1                ℓ = mean_j |w̄_j - w*_j|      (PyEPO's tutorial: nn.L1Loss(w̄, w*))
        mse               ℓ = mean_j (w̄_j - w*_j)²

    `variance_reduction` (PyEPO's default) subtracts a leave-one-out baseline from each draw's
    reward in the Stein estimate: same expectation, lower variance (Kool et al., "Buy 4
    REINFORCE samples, get a baseline for free!", ICLR-W 2019). With `solve_ratio` < 1 a
    step solves its perturbed costs only with that probability and otherwise takes the best
    solution in the oracle's pool (solution caching, Mulamba et al., IJCAI 2021). A convex
    QP's regret includes its ½wᵀPw.
    """

    takes_quadratic = True

    def __init__(self, inst, n_samples: int = 10, sigma: float = 1.0, seed: int = 135,
                 reduction: str = "mean", variance_reduction: bool = True,
                 solve_ratio: float = 1.0, task_loss: str = "regret") -> None:
        super().__init__(inst, reduction)
        self.perturb = _Perturbed(n_samples, sigma, seed)
        if not 0 <= solve_ratio <= 1:
            raise ValueError("solve_ratio must be in [0, 1]")
        if task_loss not in TASK_LOSSES:
            raise ValueError("task_loss must be one of: " + ", ".join(TASK_LOSSES))
        self.variance_reduction = bool(variance_reduction)
        self.solve_ratio, self.task_loss = solve_ratio, task_loss
        # PyEPO's draw: a RandomState seeded as the loss, one uniform per step (taken whatever
        # the ratio), so a seed caches on the same steps as PyEPO's perturbedOpt
        self.rng = np.random.RandomState(seed)

    def seed_pool(self, solutions: np.ndarray) -> None:
        self.oracle.seed_pool(solutions)

    def decisions(self, c_hat: torch.Tensor, keys=None) -> torch.Tensor:
        # this step answers from the pool with probability 1 - solve_ratio: it solves when
        # the uniform is <= solve_ratio
        solve = self.rng.uniform() <= self.solve_ratio
        cached = not solve and bool(self.oracle.pool)
        return _PerturbedOptFn.apply(c_hat, self, keys, self.variance_reduction, cached)

    def forward(self, theta_hat, theta, w_true, z_true, keys=None):
        c_hat = self.oracle.costs(theta_hat)
        c = self.oracle.costs(theta).detach()
        return self._reduce(task_loss(self.decisions(c_hat, keys), w_true, c, self.task_loss,
                                      self.oracle))


# ---------------------------------------------------------------------- DBB
class _BlackboxFn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, c_hat, module, keys):
        w = module.oracle.decisions(c_hat, keys=keys, slot="dbb").to(c_hat)
        ctx.save_for_backward(c_hat.detach(), w)
        ctx.module, ctx.keys = module, keys
        return w

    @staticmethod
    def backward(ctx, grad):
        c_hat, w = ctx.saved_tensors
        lam = ctx.module.lambd
        w_lam = ctx.module.oracle.decisions(c_hat + lam * grad, keys=ctx.keys,
                                            slot="dbb-interpolated").to(c_hat)
        return -(w - w_lam) / lam, None, None


class DBB(_DFLLoss):
    """Differentiable black-box solver (Vlastelica/Pogančić et al., "Differentiation of
    blackbox combinatorial solvers", ICLR 2020): the forward pass is the solver's w(ĉ); the
    backward pass interpolates, ∂ℓ/∂ĉ ≈ -(w(ĉ) - w(ĉ + λ ∂ℓ/∂w)) / λ. Trained on the regret

        ℓ(ĉ, c) = cᵀw(ĉ) - z*(c)   (for a convex QP f(c, w(ĉ)) - z*(c), f = cᵀw + ½wᵀPw).
    """

    takes_quadratic = True

    def __init__(self, inst, lambd: float = 10.0, reduction: str = "mean") -> None:
        super().__init__(inst, reduction)
        if not 0 < lambd < float("inf"):  # nan passed `lambd <= 0`
            raise ValueError("lambd must be positive")
        self.lambd = lambd

    def decisions(self, c_hat: torch.Tensor, keys=None) -> torch.Tensor:
        return _BlackboxFn.apply(c_hat, self, keys)

    def forward(self, theta_hat, theta, w_true, z_true, keys=None):
        c_hat = self.oracle.costs(theta_hat)
        c = self.oracle.costs(theta).detach()
        return self._reduce(task_loss(self.decisions(c_hat, keys), w_true, c, "regret",
                                      self.oracle))


# ---------------------------------------------------------------------- NCE
class NCE(_DFLLoss):
    """Noise-contrastive estimation over a solution pool (Mulamba et al., "Contrastive losses
    and solution caching for predict-and-optimize", IJCAI 2021):

        ℓ(ĉ) = mean_{w ∈ S} ĉᵀ(w* - w),

    pushing the true solution to cost less under ĉ than the pool S's other solutions. With
    `solve_ratio` the pool grows by solving a fraction of the predictions each step.
    """

    def __init__(self, inst, solve_ratio: float = 1.0, seed: int = 135,
                 reduction: str = "mean") -> None:
        super().__init__(inst, reduction)
        if not 0 <= solve_ratio <= 1:
            raise ValueError("solve_ratio must be in [0, 1]")
        self.solve_ratio = solve_ratio
        self.rng = np.random.default_rng(seed)

    def seed_pool(self, solutions: np.ndarray) -> None:
        self.oracle.seed_pool(solutions)

    def forward(self, theta_hat, theta, w_true, z_true, keys=None):
        c_hat = self.oracle.costs(theta_hat)
        if self.rng.random() < self.solve_ratio or not self.oracle.pool:
            # adds the predictions' solutions to the pool
            self.oracle.decisions(c_hat, keys=keys, slot="nce")
        pool = torch.as_tensor(self.oracle.pool_array(), dtype=c_hat.dtype, device=c_hat.device)
        loss = (c_hat * w_true.to(c_hat)).sum(-1, keepdim=True) - c_hat @ pool.T
        return self._reduce(loss.mean(-1))


# ---------------------------------------------------------------------- two-stage
class MSE(nn.Module):
    """Two-stage baseline: fit the params themselves, ℓ = ‖θ̂ - θ‖² (mean over entries)."""

    takes_quadratic = True  # (no decision in the loss)

    def __init__(self, inst=None, reduction: str = "mean") -> None:
        super().__init__()
        self.register_forward_pre_hook(same_batch, with_kwargs=True)
        if reduction not in REDUCTIONS:  # another word returned the unreduced losses
            raise ValueError("reduction must be mean, sum or none")
        self.reduction = reduction

    def forward(self, theta_hat, theta, w_true=None, z_true=None, keys=None):
        loss = ((theta_hat - theta.to(theta_hat)) ** 2).mean(-1)
        return loss.mean() if self.reduction == "mean" else loss.sum() if (
            self.reduction == "sum") else loss
