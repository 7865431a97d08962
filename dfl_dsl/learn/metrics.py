"""Decision quality: regret and normalized regret (PyEPO's definition, Tang & Khalil 2024).

regret_i = f(c_i, w(ĉ_i)) - z*(c_i) with f(c, w) = cᵀw (+ ½wᵀPw for a QP) the canonical,
minimized objective (so always >= 0), and the normalized regret is Σ_i regret_i / Σ_i |z*_i|
with z* the model's true optimal value.
"""

from __future__ import annotations

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
    return float(regret(oracle, theta_hat, theta, w_true, slot).sum() / (total + 1e-7))
