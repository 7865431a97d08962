"""Energy-cost-aware scheduling data: hourly electricity prices that depend on features, with
heteroscedastic, hour-to-hour correlated noise, plus a fixed instance of jobs, machines,
resources and time windows (the `energy_schedule` model of the Gen-DFL task; Wang et al.,
"Gen-DFL", ICLR 2026, arXiv 2502.05468, evaluate on energy-cost-aware scheduling).

Prices, for features x ~ N(0, I_p) and hour u:
    level_u(x) = [(B_u x / √p + 3)^deg + 1] / 3.5^deg          (PyEPO's nonlinearity)
    σ_u(x)     = noise · softplus(D_u x / √p)                   (heteroscedastic)
    price_u    = base_u · level_u(x) · exp(σ_u ε_u - σ_u² / 2),  ε AR(1) over hours, ρ = 0.7,
so the conditional mean is base · level and the right tail widens with σ(x): the schedule
that minimizes CVaR differs from the one that minimizes the mean.
"""

from __future__ import annotations

import numpy as np

from .pyepo_compatible import GeneratedData, check_size

_RHO = 0.7


def _instance(rnd: np.random.RandomState, horizon: int, jobs: int, machines: int) -> dict:
    names = [f"j{i}" for i in range(jobs)]
    duration = rnd.randint(1, max(2, min(5, horizon // 3)) + 1, jobs)
    earliest = np.array([rnd.randint(1, horizon - d + 2) for d in duration])
    slack = rnd.randint(2, max(3, horizon // 2), jobs)
    latest = np.minimum(earliest + duration - 1 + slack, horizon)
    resources = ["cpu", "mem"]
    use = np.round(rnd.uniform(1.0, 4.0, (jobs, len(resources))), 2)
    return {
        "horizon": int(horizon), "JOBS": names,
        "MACHINES": [f"m{i}" for i in range(machines)], "RESOURCES": resources,
        "duration": dict(zip(names, duration.tolist(), strict=True)),
        "earliest": dict(zip(names, earliest.tolist(), strict=True)),
        "latest": dict(zip(names, latest.tolist(), strict=True)),
        "power": dict(zip(names, np.round(rnd.uniform(1.0, 4.0, jobs), 2).tolist(),
                          strict=True)),
        "use": {n: dict(zip(resources, u.tolist(), strict=True))
                for n, u in zip(names, use, strict=True)},
        "capacity": {f"m{i}": dict.fromkeys(resources, 6.0) for i in range(machines)},
    }


def energy(num_data: int = 300, num_features: int = 5, deg: int = 2, noise: float = 0.5,
           draws: int = 32, horizon: int = 24, jobs: int = 6, machines: int = 2,
           seed: int = 135, param: str = "price") -> GeneratedData:
    """`draws` price scenarios per sample from the true p(price | x): training uses the first
    (one observed day per context), evaluation all of them (the true scenario set)."""
    for name, v in dict(num_data=num_data, num_features=num_features, deg=deg, draws=draws,
                        horizon=horizon, jobs=jobs, machines=machines).items():
        if int(v) != v or v < 1:
            raise ValueError(f"{name} must be a positive integer, got {v}")
    if horizon < 4:
        raise ValueError(f"horizon must be >= 4, got {horizon}")
    if not np.isfinite(noise) or noise < 0:
        raise ValueError(f"noise must be a finite number >= 0, got {noise}")
    check_size(num_data, num_features + 2 * draws * horizon)  # eps and price
    rnd = np.random.RandomState(seed)
    instance = _instance(rnd, horizon, jobs, machines)  # first: the same for any num_data
    n, p = num_data, num_features
    hours = np.arange(horizon)
    base = 20 + 12 * np.sin(np.pi * hours / horizon) ** 2 + 8 * np.sin(2 * np.pi * hours / horizon)
    B = rnd.binomial(1, 0.5, (horizon, p))
    D = rnd.normal(0, 1, (horizon, p))
    x = rnd.normal(0, 1, (n, p))
    level = ((x @ B.T / np.sqrt(p) + 3) ** deg + 1) / 3.5**deg
    sigma = noise * np.logaddexp(0.0, x @ D.T / np.sqrt(p))
    eps = np.empty((n, draws, horizon))
    eps[..., 0] = rnd.normal(0, 1, (n, draws))
    for u in range(1, horizon):  # AR(1) across hours: a loop over hours, vectorized over draws
        eps[..., u] = _RHO * eps[..., u - 1] + np.sqrt(1 - _RHO**2) * rnd.normal(0, 1, (n, draws))
    price = (base * level)[:, None, :] * np.exp(sigma[:, None, :] * eps
                                                - 0.5 * sigma[:, None, :] ** 2)
    return GeneratedData(x, {param: price}, instance)
