"""The shortest-path task of Gen-DFL (Wang et al., "Gen-DFL", ICLR 2026, arXiv 2502.05468),
which uses PyEPO's shortest-path data (Tang & Khalil 2024) on a 5 × 5 grid: arc costs

    c = [(B x / √p + 3)^deg + 1] / 3.5^deg · u,   u ~ U[1 - ε, 1 + ε] per arc,
    B ~ Bernoulli(0.5)^(d × p),  x ~ N(0, I_p),

with ε the noise half-width (the paper's runs: deg 6, ε = 0.5). The multiplicative noise makes
the spread grow with the mean, so an arc that is long on average is also the risky one.

Every sample carries `draws` cost scenarios from that true conditional distribution (fresh u
per draw). The first draw is PyEPO's own array for the same arguments (the same random stream:
B, x, then one noise matrix), so training on the first draw is training on PyEPO's data set;
evaluation uses all of them as the sample's true scenario set for the CVaR regret. (The paper's
code stands in a flow fitted to PyEPO's data for the unknown truth; here the truth is known, so
the scenarios come from it.)
"""

from __future__ import annotations

import numpy as np

from .pyepo_compatible import (
    GeneratedData,
    check_args,
    check_grid,
    check_size,
    grid_arcs,
    grid_instance,
    shortest_path_mean,
)


def shortest_path_cvar(num_data: int = 1000, num_features: int = 5,
                       grid: tuple[int, int] = (5, 5), deg: int = 6, noise_width: float = 0.5,
                       draws: int = 64, seed: int = 135, alpha: float = 0.9,
                       param: str = "cost") -> GeneratedData:
    """Arc-cost scenarios (N × draws × arcs) for the `shortest_path_cvar` model (minimize the
    CVaR_α of the route's length); the instance carries α."""
    check_grid(grid)
    check_args(deg, noise_width, num_data=num_data, num_features=num_features, draws=draws)
    if not 0 <= alpha < 1:
        raise ValueError(f"alpha must be in [0, 1), got {alpha}")
    d = len(grid_arcs(*grid))
    check_size(num_data, num_features + 2 * draws * d)  # x, the draws and their noise
    rnd = np.random.RandomState(seed)
    n = num_data
    x, mean = shortest_path_mean(rnd, n, num_features, d, deg)
    noise = np.empty((n, draws, d))
    noise[:, 0] = rnd.uniform(1 - noise_width, 1 + noise_width, (n, d))  # PyEPO's draw
    noise[:, 1:] = rnd.uniform(1 - noise_width, 1 + noise_width, (n, draws - 1, d))
    return GeneratedData(x, {param: mean[:, None, :] * noise},
                         {**grid_instance(grid), "alpha": float(alpha)})
