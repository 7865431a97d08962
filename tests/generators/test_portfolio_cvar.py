"""The Gen-DFL portfolio generator: PyEPO's return formulas with draws per sample."""

from __future__ import annotations

import numpy as np
import pytest

from dfl_dsl.generators import portfolio
from dfl_dsl.generators.portfolio_cvar import portfolio_cvar


def test_shapes_and_instance():
    data = portfolio_cvar(num_data=10, num_assets=6, draws=3, alpha=0.8)
    assert data.features.shape == (10, 5) and data.targets["ret"].shape == (10, 3, 6)
    assert data.instance == {"n": 6, "alpha": 0.8}


def test_same_mean_function_and_factor_structure_as_pyepo():
    """Features and the conditional mean match PyEPO's portfolio data for the same seed; the
    draws' covariance is L Lᵀ + (0.01 τ)² I."""
    ours = portfolio_cvar(num_data=400, num_assets=4, deg=4, noise_level=2.0, draws=400, seed=7)
    pyepo = portfolio(num_data=400, num_assets=4, deg=4, noise_level=2.0, seed=7)
    assert np.array_equal(ours.features, pyepo.features)
    draws = ours.targets["ret"]
    residual_mean = (draws.mean(1) - pyepo.targets["ret"]).mean()
    assert abs(residual_mean) < 0.005  # both centre on the same mean returns
    centered = draws - draws.mean(1, keepdims=True)
    cov = np.cov(centered.reshape(-1, 4), rowvar=False)
    assert np.allclose(cov, pyepo.instance["cov"], atol=2e-4)


@pytest.mark.parametrize("bad", [dict(num_assets=0), dict(noise_level=-1.0), dict(alpha=1.0)])
def test_bad_arguments(bad):
    with pytest.raises(ValueError):
        portfolio_cvar(**bad)
