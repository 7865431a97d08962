"""Cone-aligned vector estimation, CaVE (Tang & Khalil, "CaVE: a cone-aligned approach for fast
predict-then-optimize with binary linear programs", CPAIOR 2024).

A cost vector makes w* optimal exactly when, in the oracle's minimized space, -ĉ lies in the
normal cone of the feasible set at w*: the cone spanned by the normals of the constraints that
bind there (a row at its upper end: +a; at its lower end: -a; both for an equality; a variable
at its lower bound: -e_j, at its upper bound: +e_j). CaVE trains -ĉ's direction towards that
cone:

    ℓ(ĉ, w*) = 1 - cos(-ĉ, p),   p = the projection of -ĉ onto cone{normals at w*}

with p held fixed (no gradient through it), so no solver runs at all: the normals come from
the model's rows and w* alone, which the oracle's LinearForm holds. As in the paper's CaVE+
preset, the projection (a nonnegative least-squares QP) stops after `max_iter` interior-point
iterations of Clarabel, on purpose: an under-converged p stays inside the cone. With
`solve_ratio` < 1 ("CaVE hybrid") a step projects only with that probability and otherwise
takes p = (1 - r)·(-ĉ)/‖ĉ‖ + r·(the mean unit normal), r = `inner_ratio`.

Defined for binary linear programs: w* must be 0/1 (checked per sample).
"""

from __future__ import annotations

import functools

import numpy as np
import scipy.sparse as sp
import torch
import torch.nn.functional as F

from ..errors import DflError
from .losses import _DFLLoss
from .oracle import pool_key

TIGHT = 1e-5  # a row or bound within this of its limit binds (PyEPO's slack tolerance)


def binding_normals(form, w: np.ndarray) -> np.ndarray:
    """The normals (rows, k × n) of the constraints and bounds of `form` that bind at the
    binary point `w`, each oriented outwards (the normal cone at w is their conic hull)."""
    activity = form.A @ w
    upper = np.abs(activity - form.ru) < TIGHT
    lower = np.abs(activity - form.rl) < TIGHT
    rows = sp.csr_array(form.A)
    blocks = [rows[np.flatnonzero(upper)].toarray(), -rows[np.flatnonzero(lower)].toarray()]
    eye = np.eye(form.n)
    blocks += [-eye[np.abs(w - form.lb) < TIGHT], eye[np.abs(w - form.ub) < TIGHT]]
    return np.vstack(blocks)


@functools.cache
def _settings(max_iter: int):
    import clarabel  # (a dependency of cvxpy)

    settings = clarabel.DefaultSettings()
    settings.max_iter, settings.verbose, settings.max_threads = max_iter, False, 1
    settings.presolve_enable = settings.equilibrate_enable = False
    return settings


def cone_projection(v: np.ndarray, normals: np.ndarray, max_iter: int) -> np.ndarray:
    """p = Nᵀλ with λ = argmin_{λ >= 0} ‖Nᵀλ - v‖², by at most `max_iter` Clarabel steps
    (the QP ½λᵀ(2NNᵀ)λ - 2(Nv)ᵀλ subject to λ >= 0); v itself when nothing binds."""
    import clarabel

    if len(normals) == 0:
        return v
    k = len(normals)
    quad = sp.triu(sp.csc_matrix(2.0 * normals @ normals.T)).tocsc()
    solver = clarabel.DefaultSolver(quad, -2.0 * normals @ v, -sp.eye(k, format="csc"),
                                    np.zeros(k), [clarabel.NonnegativeConeT(k)],
                                    _settings(max_iter))
    return np.asarray(solver.solve().x) @ normals


def _other_losses() -> str:
    """The hint of a refusal: the losses that train an LP or MILP without CaVE's demand."""
    from .loss_registry import LOSSES

    return "train it with --loss " + " | ".join(name for name in LOSSES if name != "cave")


class CaVE(_DFLLoss):
    """CaVE (module docstring): one minus the cosine between -ĉ and its projection onto the
    normal cone at the true binary solution. Settings: `max_iter` (3, CaVE+), `solve_ratio`
    and `inner_ratio` (CaVE hybrid)."""

    def __init__(self, inst, max_iter: int = 3, solve_ratio: float = 1.0,
                 inner_ratio: float = 0.2, seed: int = 135, reduction: str = "mean") -> None:
        super().__init__(inst, reduction)
        form = self.oracle.form
        outside = np.flatnonzero((form.lb < 0) | (form.ub > 1))  # (a QP: by _DFLLoss)
        if len(outside):
            raise self._refusal(int(outside[0]))
        if max_iter < 1 or not 0 <= solve_ratio <= 1 or not 0 <= inner_ratio <= 1:
            raise ValueError("max_iter must be >= 1, solve_ratio and inner_ratio in [0, 1]")
        self.max_iter, self.solve_ratio, self.inner_ratio = max_iter, solve_ratio, inner_ratio
        self.rng = np.random.default_rng(seed)
        self._normals: dict[bytes, np.ndarray] = {}

    def _refusal(self, col: int) -> DflError:
        """Why CaVE can't take this model, at the declaration of the first variable whose
        bounds leave [0, 1] (where the user can narrow it), with the losses that can."""
        inst, form = self.oracle.inst, self.oracle.form
        label = inst.column_label(col)
        symbol = inst.model.symbols.get(label.split("[")[0])
        return DflError(
            f"CaVE is for binary linear programs (every variable within [0, 1]); `{label}` "
            f"ranges over [{form.lb[col]:g}, {form.ub[col]:g}]",
            symbol.decl.pos if symbol is not None else None, filename=inst.model.filename,
            source=inst.model.source, hint=_other_losses())

    def normals(self, w: np.ndarray) -> np.ndarray:
        """The binding normals at the true solution `w` (computed once per distinct w)."""
        key = pool_key(w)
        if key not in self._normals:
            if not np.all((np.abs(w) < TIGHT) | (np.abs(w - 1) < TIGHT)):
                raise DflError("CaVE needs binary true solutions; one has entries "
                               f"{sorted({round(float(x), 6) for x in w})[:4]}",
                               hint=_other_losses(), filename=self.oracle.inst.model.filename)
            self._normals[key] = binding_normals(self.oracle.form, np.round(w))
        return self._normals[key]

    def _targets(self, v: np.ndarray, w_true: np.ndarray) -> np.ndarray:
        """The fixed directions p for the rows of v = -ĉ."""
        if self.rng.random() < self.solve_ratio:
            return np.stack([cone_projection(vi, self.normals(wi), self.max_iter)
                             for vi, wi in zip(v, w_true, strict=True)])
        mean_normal = []
        for wi in w_true:
            n = self.normals(wi)
            unit = n / np.linalg.norm(n, axis=1, keepdims=True) if len(n) else n
            mean_normal.append(unit.mean(0) if len(n) else np.zeros(v.shape[1]))
        scale = np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-8)
        return (1 - self.inner_ratio) * v / scale + self.inner_ratio * np.stack(mean_normal)

    def forward(self, theta_hat, theta, w_true, z_true, keys=None):
        v = -self.oracle.costs(theta_hat)
        target = self._targets(v.detach().cpu().numpy(), w_true.detach().cpu().numpy())
        p = torch.as_tensor(target, dtype=v.dtype, device=v.device)
        return self._reduce(1 - F.cosine_similarity(v, p, dim=1))
