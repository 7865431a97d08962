"""Implicit maximum-likelihood estimation: I-MLE (Niepert, Minervini & Franceschi, "Implicit
MLE: backpropagating through discrete exponential family distributions", NeurIPS 2021) and its
adaptive step, AI-MLE (Minervini, Franceschi & Niepert, "Adaptive perturbation-based gradient
estimation for discrete latent variable models", AAAI 2023).

The forward pass is perturb-and-MAP: the mean decision w̄ = mean_s w(ĉ + σε_s) under
Sum-of-Gamma noise ε. The backward pass takes the task loss's gradient g = ∂ℓ/∂w̄ as the
direction of a "target" distribution and differentiates by a finite difference of the solver
under the same noise draws:

    ∂ℓ/∂ĉ ≈ mean_s [w(ĉ + σε_s + λg) - w(ĉ + σε_s)] / λ          (one-sided)
    ∂ℓ/∂ĉ ≈ mean_s [w(ĉ + σε_s + λg) - w(ĉ + σε_s - λg)] / (2λ)   (two-sided)

in the oracle's minimized cost space (a maximize model's costs are negated there, so the
direction needs no sign of its own). AI-MLE sets λ = α‖ĉ‖/‖g‖ per batch and moves α by a fixed
step after each backward pass (PyEPO 2.2.7's rule: up while the moving average of the share of
non-zero gradient entries is below 1, else down).

The noise is added to the model's own cost vector, only where a predicted param enters it (as
PyEPO does): the Sum-of-Gamma law is skewed, so its sign matters for maximize models.
"""

from __future__ import annotations

import math

import torch

from .loss_settings import TASK_LOSSES
from .losses import _DFLLoss, _Perturbed, task_loss

SUM_OF_GAMMA_TERMS = 10  # s in SoG(κ, s); PyEPO's and the paper's choice


class _SumOfGamma(_Perturbed):
    """Perturbations σε with ε ~ SoG(κ, s) = (Σ_{i=1}^{s} Gamma(1/κ, κ/i) - log s) / κ, the
    noise whose sum over κ draws is Gumbel (Niepert et al. 2021, §3.1), seeded."""

    def __init__(self, n_samples: int, sigma: float, kappa: float, seed: int,
                 direction: torch.Tensor) -> None:
        super().__init__(n_samples, sigma, seed)
        if not 0 < kappa < math.inf:
            raise ValueError("kappa must be positive")
        self.kappa = kappa
        self.direction = direction  # ±1 where a predicted param enters the cost, else 0

    def sample(self, c_hat: torch.Tensor) -> torch.Tensor:
        """ε (B, S, n) in float32, as the Gaussian draws (`_Perturbed.sample`): the same seed
        gives PyEPO's draws for a torch model's float32 predictions, bit for bit."""
        b, n = c_hat.shape
        k, s = self.kappa, SUM_OF_GAMMA_TERMS
        shape = torch.full((s, b, self.n_samples, n), 1.0 / k, dtype=torch.float32)
        scale = k / torch.arange(1, s + 1, dtype=torch.float32).view(s, 1, 1, 1)
        gamma = torch._standard_gamma(shape, generator=self.generator) * scale
        noise = (gamma.sum(0) - math.log(s)) / k
        return (noise * self.direction).to(c_hat)


class _ImplicitMLEFn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, c_hat, module, keys):
        noise = module.perturb.sample(c_hat)
        _, sols = module.perturb.solve(module.oracle, c_hat, noise, keys, "imle")
        ctx.save_for_backward(c_hat.detach(), noise, sols)
        ctx.module, ctx.keys = module, keys
        return sols.mean(1)

    @staticmethod
    def backward(ctx, grad):
        c_hat, noise, sols = ctx.saved_tensors
        module, keys = ctx.module, ctx.keys
        lam = module.step_size(c_hat, grad)
        perturb, oracle = module.perturb, module.oracle
        if lam == 0:  # no upstream gradient: nothing to interpolate towards
            out = torch.zeros_like(c_hat)
        elif module.two_sides:
            _, up = perturb.solve(oracle, c_hat + lam * grad, noise, keys, "imle-up")
            _, down = perturb.solve(oracle, c_hat - lam * grad, noise, keys, "imle-down")
            out = (up - down).mean(1) / (2 * lam)
        else:
            _, up = perturb.solve(oracle, c_hat + lam * grad, noise, keys, "imle-up")
            out = (up - sols).mean(1) / lam
        module.adapt(out)
        return out, None, None


class _ImplicitMLE(_DFLLoss):
    def __init__(self, inst, n_samples: int, sigma: float, kappa: float, two_sides: bool,
                 task_loss: str, seed: int, reduction: str) -> None:
        super().__init__(inst, reduction)
        if task_loss not in TASK_LOSSES:
            raise ValueError("task_loss must be one of: " + ", ".join(TASK_LOSSES))
        form, index = self.oracle.form, self.oracle.theta_index
        predicted = abs(form.c_theta.tocsr()[:, index]).sum(1) > 0
        direction = torch.as_tensor(predicted, dtype=torch.float64).flatten() * form.sign
        self.perturb = _SumOfGamma(n_samples, sigma, kappa, seed, direction)
        self.two_sides, self.task_loss = bool(two_sides), task_loss

    def step_size(self, c_hat: torch.Tensor, grad: torch.Tensor) -> float:
        raise NotImplementedError

    def adapt(self, grad: torch.Tensor) -> None:
        """After a backward pass (AI-MLE's step-size rule)."""

    def decisions(self, c_hat: torch.Tensor, keys=None) -> torch.Tensor:
        return _ImplicitMLEFn.apply(c_hat, self, keys)

    def forward(self, theta_hat, theta, w_true, z_true, keys=None):
        c_hat = self.oracle.costs(theta_hat)
        c = self.oracle.costs(theta).detach()
        return self._reduce(task_loss(self.decisions(c_hat, keys), w_true, c, self.task_loss,
                                      self.oracle))


class IMLE(_ImplicitMLE):
    """I-MLE with a fixed finite-difference step λ (module docstring). Trained on `task_loss`
    of the mean perturbed decision: l1 against w* by default (PyEPO's documented use), or
    regret or mse."""

    def __init__(self, inst, n_samples: int = 10, sigma: float = 1.0, lambd: float = 10.0,
                 kappa: float = 5.0, two_sides: bool = False, task_loss: str = "l1",
                 seed: int = 135, reduction: str = "mean") -> None:
        super().__init__(inst, n_samples, sigma, kappa, two_sides, task_loss, seed, reduction)
        if not 0 < lambd < math.inf:
            raise ValueError("lambd must be positive")
        self.lambd = lambd

    def step_size(self, c_hat: torch.Tensor, grad: torch.Tensor) -> float:
        return self.lambd


class AIMLE(_ImplicitMLE):
    """AI-MLE: I-MLE with λ = α‖ĉ‖/‖g‖ over the batch, α adapted after every backward pass
    (module docstring); α starts at 1 and moves by `ALPHA_STEP`, the share of non-zero
    gradient entries averaged with weight `AVERAGE` on the past."""

    ALPHA_STEP, AVERAGE, TARGET = 1e-3, 0.9, 1.0

    def __init__(self, inst, n_samples: int = 10, sigma: float = 1.0, kappa: float = 5.0,
                 two_sides: bool = False, task_loss: str = "l1", seed: int = 135,
                 reduction: str = "mean") -> None:
        super().__init__(inst, n_samples, sigma, kappa, two_sides, task_loss, seed, reduction)
        self.alpha, self.nonzero_share = 1.0, 1.0

    def step_size(self, c_hat: torch.Tensor, grad: torch.Tensor) -> float:
        norm = float(torch.linalg.vector_norm(grad))
        return self.alpha * float(torch.linalg.vector_norm(c_hat)) / norm if norm > 0 else 0.0

    def adapt(self, grad: torch.Tensor) -> None:
        share = float((grad.abs() > 1e-8).double().mean())
        self.nonzero_share = self.AVERAGE * self.nonzero_share + (1 - self.AVERAGE) * share
        if self.nonzero_share < self.TARGET:
            self.alpha += self.ALPHA_STEP
        else:
            self.alpha = max(0.0, self.alpha - self.ALPHA_STEP)
