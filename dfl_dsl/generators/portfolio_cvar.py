"""The portfolio task of Gen-DFL (Wang et al., "Gen-DFL", ICLR 2026, arXiv 2502.05468), which
uses PyEPO's portfolio formulas (Tang & Khalil 2024) for the asset returns:

    r = (0.05 B x / √p + 0.1^(1/deg))^deg + L f + 0.01 τ ε,   f ~ N(0, I_p), ε ~ N(0, I_m),
    L ~ U[-0.0025 τ, 0.0025 τ]^(m × p),  B ~ Bernoulli(0.5)^(m × p),  x ~ N(0, I_p),

with τ the noise level. Here every sample carries `draws` return scenarios from that true
conditional distribution (fresh f, ε per draw): training uses the first (one observed period
per context), evaluation all of them (the true scenario set for the CVaR regret).
"""

from __future__ import annotations

import numpy as np

from .pyepo_compatible import GeneratedData, check_size, portfolio_mean


def portfolio_cvar(num_data: int = 1000, num_features: int = 5, num_assets: int = 50,
                   deg: int = 4, noise_level: float = 1.0, draws: int = 64, seed: int = 135,
                   alpha: float = 0.9, param: str = "ret") -> GeneratedData:
    """Returns for the `portfolio_cvar` model (maximize the CVaR_α of the portfolio return)."""
    for name, v in dict(num_data=num_data, num_features=num_features, num_assets=num_assets,
                        deg=deg, draws=draws).items():
        if int(v) != v or v < 1:
            raise ValueError(f"{name} must be a positive integer, got {v}")
    if not np.isfinite(noise_level) or noise_level < 0:
        raise ValueError(f"noise_level must be a finite number >= 0, got {noise_level}")
    if not 0 <= alpha < 1:
        raise ValueError(f"alpha must be in [0, 1), got {alpha}")
    check_size(num_data, num_features + draws * (num_features + 2 * num_assets))
    rnd = np.random.RandomState(seed)
    n, p, m = num_data, num_features, num_assets
    x, mean, L = portfolio_mean(rnd, n, p, m, deg, noise_level)
    f = rnd.randn(n, draws, p)
    eps = rnd.randn(n, draws, m)
    r = mean[:, None, :] + f @ L.T + 0.01 * noise_level * eps
    return GeneratedData(x, {param: r}, {"n": m, "alpha": float(alpha)})
