"""Decision quality: regret and normalized regret (PyEPO's definition, Tang & Khalil 2024).

regret_i = f(c_i, w(ĉ_i)) - z*(c_i) with f(c, w) = cᵀw (+ ½wᵀPw for a QP) the canonical,
minimized objective (so always >= 0), and the normalized regret is Σ_i regret_i / Σ_i |z*_i|
with z* the model's true optimal value. When every z* is 0 that ratio has no scale (PyEPO's
guard, Σ regret / (Σ|z*| + 1e-7), then reports 10⁷ × the regret): the figure is the mean regret
per sample instead, in the objective's units, with one `RegretWarning` (`per_scale`).
"""

from __future__ import annotations

import warnings

import numpy as np
import torch

from .oracle import Oracle


def regret(oracle: Oracle, theta_hat, theta, w_true: np.ndarray | None = None,
           slot: str = "regret") -> np.ndarray:
    """Per-sample regret of deciding with θ̂ when the truth is θ. The samples are named by
    their row (in `slot`), so an oracle that warm-starts re-scores a monitored set quickly."""
    theta_hat_t = torch.as_tensor(np.asarray(theta_hat, dtype=float), dtype=torch.float64)
    theta_t = torch.as_tensor(np.asarray(theta, dtype=float), dtype=torch.float64)
    c = oracle.costs(theta_t)
    w_hat = oracle.solve(oracle.costs(theta_hat_t), keys=np.arange(len(theta_hat_t)),
                         slot=slot, remember=False).w
    if w_true is None:
        w_true = oracle.solve(c, remember=False).w
    gap = oracle.value(c, torch.as_tensor(w_hat)) - oracle.value(c, torch.as_tensor(w_true))
    return np.maximum(gap.numpy(), 0.0)


def true_objective(oracle: Oracle, theta, w_true: np.ndarray) -> np.ndarray:
    """z*(c) in the model's own sense, constant included."""
    theta = np.asarray(theta, dtype=float)
    c = oracle.costs(torch.as_tensor(theta, dtype=torch.float64))
    canonical = oracle.value(c, torch.as_tensor(w_true, dtype=torch.float64)).numpy()
    return oracle.form.sign * (canonical + oracle.constant(theta))


def normalized_regret(oracle: Oracle, theta_hat, theta, w_true=None, z_true=None,
                      slot: str = "regret") -> float:
    """Σ regret / Σ |z*| (PyEPO's normalized regret)."""
    theta = np.asarray(theta, dtype=float)
    if w_true is None:
        c = oracle.costs(torch.as_tensor(theta, dtype=torch.float64)).numpy()
        w_true = oracle.solve(c, remember=False).w
    if z_true is None:
        z_true = true_objective(oracle, theta, w_true)
    total = float(np.abs(z_true).sum())
    return per_scale(float(regret(oracle, theta_hat, theta, w_true, slot).sum()), total,
                     len(theta))


GUARD = 1e-7  # PyEPO's: added to Σ|z*| so that the division never fails


class RegretWarning(UserWarning):
    """The regret is reported otherwise than asked (every z* is 0: the mean, not normalized)."""


def per_scale(regret_sum: float, scale: float, n: int, optimum: str = "optimal objective z*"
              ) -> float:
    """Σ regret / (Σ|z*| + 1e-7), PyEPO's normalized regret, or — when Σ|z*| is no larger than
    that guard, i.e. every z* is 0 and the guard alone would set the figure (10⁷ × the regret,
    or 0/0 without it) — the mean regret per sample, Σ regret / n, in the objective's units,
    said once (the warning's text and place are fixed, so Python shows it once)."""
    if regret_kind(scale) == "normalized":
        return regret_sum / (scale + GUARD)
    warnings.warn(RegretWarning(
        f"every true {optimum} is 0, so the normalized regret (over the sum of their absolute "
        "values) has no scale: "
        "the regret reported is the mean regret per sample, in the objective's units"),
        stacklevel=2)
    return regret_sum / max(n, 1)


# what the outputs call each figure `per_scale` reports (--json's "regret_kind", the label)
REGRET_LABELS = {"normalized": "normalized regret", "mean per sample": "mean regret per sample"}


def regret_kind(scale: float) -> str:
    """Which figure `per_scale` reports for Σ|z*| = `scale`: "normalized", or "mean per
    sample" when every z* is 0 (the one rule, so the outputs' label never disagrees)."""
    return "normalized" if scale > GUARD else "mean per sample"


def data_regret_kind(z_true) -> str:
    """`regret_kind` of a data set's true optimal objectives z*."""
    return regret_kind(float(np.abs(np.asarray(z_true, dtype=float)).sum()))
