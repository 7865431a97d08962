"""Shortest path, knapsack and portfolio data with PyEPO's formulas and seeds
(pyepo.data.shortestpath / knapsack / portfolio, v2.2): for the same arguments these return the
same arrays, so results compare one to one with PyEPO's.

Each generator returns a `GeneratedData`: features (N × p), the true values of the model's
predicted param (N × its shape), and the instance data (sets and fixed params) as a dict.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..evaluate.sizes import check_count
from ..evaluate.values import EvalError


@dataclass
class GeneratedData:
    features: np.ndarray  # (N, p)
    targets: dict[str, np.ndarray]  # predicted param name -> (N, ...) true values
    instance: dict  # sets and fixed params for binding

    def split(self, n_train: int) -> tuple[GeneratedData, GeneratedData]:
        first = GeneratedData(self.features[:n_train],
                              {k: v[:n_train] for k, v in self.targets.items()}, self.instance)
        rest = GeneratedData(self.features[n_train:],
                             {k: v[n_train:] for k, v in self.targets.items()}, self.instance)
        return first, rest

    def arrays(self) -> dict[str, np.ndarray]:
        """The training-file format (LANGUAGE.md §5): features + one array per param."""
        return {"features": self.features, **self.targets}


def check_args(deg: int, noise: float, **sizes: int) -> None:
    if int(deg) != deg or deg < 1:
        raise ValueError(f"deg must be a positive integer, got {deg}")
    if not np.isfinite(noise) or noise < 0:
        raise ValueError(f"noise must be a finite number >= 0, got {noise}")
    for name, size in sizes.items():
        if int(size) != size or size < 1:
            raise ValueError(f"{name} must be a positive integer, got {size}")


def check_size(num_data: int, per_sample: int) -> None:
    """Refuse up front what would allocate more than the size cap (`evaluate.sizes`):
    `--num-data 100000000000` was a MemoryError (3.6 TiB) after the checks had passed."""
    try:
        check_count(int(num_data) * int(per_sample), f"{int(num_data):,} samples", 8,
                    "give fewer samples")
    except EvalError as exc:
        raise ValueError(f"{exc} ({exc.hint})") from None


def grid_arcs(rows: int, cols: int) -> list[tuple[int, int]]:
    """PyEPO's arc order on a grid: per row, the rightward arcs, then the downward ones."""
    arcs = []
    for i in range(rows):
        for j in range(cols - 1):
            v = i * cols + j
            arcs.append((v, v + 1))
        if i == rows - 1:
            continue
        for j in range(cols):
            v = i * cols + j
            arcs.append((v, v + cols))
    return arcs


def shortest_path(num_data: int = 1000, num_features: int = 5, grid: tuple[int, int] = (5, 5),
                  deg: int = 1, noise_width: float = 0.0, seed: int = 135,
                  param: str = "cost") -> GeneratedData:
    """c = [(Bx/√p + 3)^deg + 1] / 3.5^deg · ε, ε ~ U[1 - noise, 1 + noise] (PyEPO)."""
    check_grid(grid)
    check_args(deg, noise_width, num_data=num_data, num_features=num_features)
    d = len(grid_arcs(*grid))
    check_size(num_data, num_features + 2 * d)  # x, c and the noise
    rnd = np.random.RandomState(seed)
    x, c = shortest_path_mean(rnd, num_data, num_features, d, deg)
    c *= rnd.uniform(1 - noise_width, 1 + noise_width, (num_data, d))
    return GeneratedData(x, {param: c.astype(np.float32)}, grid_instance(grid))


def check_grid(grid: tuple[int, int]) -> None:
    """(rows, cols), positive, with at least two nodes: with fewer there are no arcs and
    nothing to learn."""
    if len(grid) != 2:
        raise ValueError(f"grid must be (rows, cols), got {grid}")
    check_args(1, 0.0, grid_rows=grid[0], grid_cols=grid[1])
    if grid[0] * grid[1] < 2:
        raise ValueError(f"a {grid[0]}x{grid[1]} grid has no arcs; give at least 2 nodes")


def grid_instance(grid: tuple[int, int]) -> dict:
    """The shortest-path instance on a grid: nodes, PyEPO's arcs, top-left to bottom-right."""
    nodes = list(range(grid[0] * grid[1]))
    return {"NODES": nodes, "ARCS": [list(a) for a in grid_arcs(*grid)],
            "source": 0, "sink": nodes[-1]}


def shortest_path_mean(rnd: np.random.RandomState, n: int, p: int, d: int, deg: int
                       ) -> tuple[np.ndarray, np.ndarray]:
    """PyEPO's shortest-path draws, in its order: features x (n × p) and the noise-free arc
    costs [(Bx/√p + 3)^deg + 1] / 3.5^deg (n × d), the mean of the multiplicative noise."""
    B = rnd.binomial(1, 0.5, (d, p))
    x = rnd.normal(0, 1, (n, p))
    c = (x @ B.T / np.sqrt(p) + 3) ** deg + 1
    return x, c / 3.5**deg


def knapsack(num_data: int = 1000, num_features: int = 5, num_items: int = 32, dim: int = 2,
             deg: int = 1, noise_width: float = 0.0, seed: int = 135, capacity: float = 20.0,
             param: str = "value") -> GeneratedData:
    """weights ~ U{3.00..7.99}; values = ⌈5[(Bx/√p + 3)^deg + 1] / 3.5^deg · ε⌉ (PyEPO)."""
    check_args(deg, noise_width, num_data=num_data, num_features=num_features, num_items=num_items,
           dim=dim)
    check_size(num_data, num_features + 2 * num_items)
    rnd = np.random.RandomState(seed)
    n, p, m = num_data, num_features, num_items
    weights = rnd.choice(range(300, 800), size=(dim, m)) / 100
    B = rnd.binomial(1, 0.5, (m, p))
    x = rnd.normal(0, 1, (n, p))
    c = (x @ B.T / np.sqrt(p) + 3) ** deg + 1
    c *= 5
    c /= 3.5**deg
    c *= rnd.uniform(1 - noise_width, 1 + noise_width, (n, m))
    c = np.ceil(c).astype(np.float32)
    instance = {"ITEMS": list(range(m)), "DIMS": list(range(dim)), "weight": weights.tolist(),
                "capacity": [float(capacity)] * dim}
    return GeneratedData(x, {param: c}, instance)


def portfolio_mean(rnd: np.random.RandomState, n: int, p: int, m: int, deg: int,
                   noise_level: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """PyEPO's portfolio draws, in its order: features x (n × p), the conditional mean return
    (0.05 Bx/√p + 0.1^(1/deg))^deg (n × m) and the factor loadings L (m × p)."""
    B = rnd.binomial(1, 0.5, (m, p))
    L = rnd.uniform(-2.5e-3 * noise_level, 2.5e-3 * noise_level, (m, p))
    x = rnd.normal(0, 1, (n, p))
    return x, (0.05 * (x @ B.T) / np.sqrt(p) + 0.1 ** (1 / deg)) ** deg, L


def portfolio(num_data: int = 1000, num_features: int = 5, num_assets: int = 50, deg: int = 1,
              noise_level: float = 1.0, seed: int = 135, gamma: float = 2.25,
              param: str = "ret") -> GeneratedData:
    """r = (0.05 Bx/√p + 0.1^(1/deg))^deg + L f + 0.01 τ ε, Σ = L Lᵀ + (0.01 τ)² I (PyEPO);
    the risk budget is gamma × the average risk of the equal-weight portfolio, as in PyEPO's
    portfolio model."""
    check_args(deg, noise_level, num_data=num_data, num_features=num_features,
           num_assets=num_assets)
    check_size(num_data, 2 * (num_features + num_assets))
    rnd = np.random.RandomState(seed)
    n, p, m = num_data, num_features, num_assets
    x, r, L = portfolio_mean(rnd, n, p, m, deg, noise_level)
    fe = rnd.randn(n, p + m)
    F, E = fe[:, :p], fe[:, p:]
    r += F @ L.T + 0.01 * noise_level * E
    cov = L @ L.T + (1e-2 * noise_level) ** 2 * np.eye(m)
    risk = float(gamma * np.ones(m) @ cov @ np.ones(m) / m**2)
    instance = {"n": m, "cov": cov.tolist(), "gamma": risk}
    return GeneratedData(x, {param: r.astype(np.float32)}, instance)
