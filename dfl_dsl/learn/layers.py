"""Differentiable decision layers: predicted params (leading batch axis) -> decisions.

`inst.layer(method=...)`: `dbb` (Vlastelica/Pogančić et al., ICLR 2020), `dpo` / `pfyl`
(perturbed optimizers, Berthet et al., NeurIPS 2020), `identity` (straight-through negative
identity, Sahoo et al., "Backpropagation through combinatorial algorithms: identity with
projection works", ICLR 2023) for LP/MILP models, and `cvxpylayers` (Agrawal et al., NeurIPS
2019: exact implicit differentiation) for convex DPP models, and `flexqp` (Deep FlexQP, arXiv
2512.01565: batched ADMM in torch, implicit KKT or unrolled backward) for QP/LP models. SPO+,
NCE and MSE are losses, not layers: see `dfl_dsl.learn.losses`.
"""

from __future__ import annotations

import torch
from torch import nn

from ..errors import DflError
from ..predicted import as_given
from ..predicted import stack_params as _stack_params
from .losses import _BlackboxFn, _Perturbed, _PerturbedOptFn
from .oracle import Oracle

LAYER_METHODS = ("dbb", "dpo", "pfyl", "identity", "cvxpylayers", "flexqp")


class _Identity(torch.autograd.Function):
    @staticmethod
    def forward(ctx, c_hat, oracle):
        return oracle.decisions(c_hat).to(c_hat)

    @staticmethod
    def backward(ctx, grad):
        return -grad, None


class DecisionLayer(nn.Module):
    """LP/MILP decisions w(ĉ) with a method's gradient; returns the model's variables."""

    def __init__(self, inst, method: str = "dbb", *, lambd: float = 10.0, n_samples: int = 10,
                 sigma: float = 1.0, seed: int = 135) -> None:
        super().__init__()
        self.inst = inst
        self.method = method
        if method == "dbb" and not 0 < lambd < float("inf"):  # λ <= 0 flips the gradient
            raise ValueError(f"lambd must be a positive number, got {lambd}")
        self.oracle = Oracle(inst)
        self.lambd = lambd
        self.perturb = _Perturbed(n_samples, sigma, seed)

    def forward(self, *args, **kwargs) -> torch.Tensor:
        theta = _stack_params(self.inst, args, kwargs).double()
        c_hat = self.oracle.costs(theta)
        if self.method == "dbb":
            w = _BlackboxFn.apply(c_hat, self, None)
        elif self.method in ("dpo", "pfyl"):
            w = _PerturbedOptFn.apply(c_hat, self, None)
        else:
            w = _Identity.apply(c_hat, self.oracle)
        return as_given(self.inst, args, kwargs, w[:, : self.oracle.form.n_model])


# diffcp's default SCS tolerances (1e-4) leave decisions ~1e-3 and gradients ~1% off on small
# well-scaled problems (the spec's portfolio): solve tightly unless the caller says otherwise.
CVXPYLAYERS_SOLVER_ARGS = {"eps_abs": 1e-8, "eps_rel": 1e-8}


class CvxpyLayerModule(nn.Module):
    """Exact implicit gradients through a convex (DPP) model with cvxpylayers."""

    def __init__(self, inst, solver_args: dict | None = None) -> None:
        super().__init__()
        from cvxpylayers.torch import CvxpyLayer

        from ..backends.cvxpy_backend import build

        built = build(inst)
        if built.theta is None:
            raise DflError("the model has no predicted param to differentiate with respect to")
        if not built.problem.is_dpp():
            raise DflError("the model is not DPP (disciplined parametrized); cvxpylayers can't "
                           "differentiate it")
        if built.problem.is_mixed_integer():
            raise DflError("cvxpylayers needs a continuous model", hint="use method='dbb'")
        self.inst = inst
        self.n_model = built.n_model
        self.layer = CvxpyLayer(
            built.problem, parameters=[built.theta], variables=[built.x],
            solver_args=CVXPYLAYERS_SOLVER_ARGS if solver_args is None else solver_args,
        )
        self.register_buffer("index", torch.as_tensor(inst.predicted_index(), dtype=torch.long))
        self.n_theta = built.theta.shape[0]

    def forward(self, *args, **kwargs) -> torch.Tensor:
        theta_pred = _stack_params(self.inst, args, kwargs).double()
        theta = theta_pred.new_zeros((theta_pred.shape[0], self.n_theta))
        theta = theta.index_copy(1, self.index, theta_pred)
        (x,) = self.layer(theta)
        return as_given(self.inst, args, kwargs, x[:, : self.n_model])


ORACLE_LAYERS = ("dbb", "dpo", "pfyl", "identity")  # through the oracle: LP, MILP, convex QP


def make_layer(inst, method: str = "dbb", **options) -> nn.Module:
    if method in ("cvxpylayers", "flexqp"):
        try:
            return _solver_layer(inst, method, options)
        except DflError as exc:  # (a class refusal: say which layers take the model instead)
            if inst.predicted and exc.hint in (None, "use method='dbb'"):
                exc.hint = ("method=" + ", ".join(f"'{m}'" for m in ORACLE_LAYERS) +
                            " take LP, MILP and convex-QP models (the oracle's)")
            raise exc.located(inst.model.filename, None) from None
    if method in ("spo+", "nce", "mse"):
        raise DflError(f"`{method}` is a loss, not a layer",
                       hint="use dfl_dsl.learn.losses (e.g. SPOPlus(inst)) with a predictor")
    if method not in LAYER_METHODS:
        raise DflError(f"unknown layer method `{method}`",
                       hint="choose one of: " + ", ".join(LAYER_METHODS))
    return DecisionLayer(inst, method, **options)


def _solver_layer(inst, method: str, options: dict) -> nn.Module:
    if method == "cvxpylayers":
        return CvxpyLayerModule(inst, **options)
    # Deep FlexQP: batched ADMM, implicit (KKT) or unrolled backward
    from ..backends.flexqp.layer import FlexQPLayer

    return FlexQPLayer(inst, **options)
