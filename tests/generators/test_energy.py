"""The energy-scheduling generator: shapes, reproducibility, heteroscedastic prices, and an
instance the example model binds and solves."""

from __future__ import annotations

import numpy as np
import pytest

import dfl_dsl as dfl
from dfl_dsl.generators.energy import energy

EXAMPLE = "examples/energy_schedule/energy_schedule.opt"


def test_shapes_and_reproducibility():
    a = energy(num_data=12, num_features=3, draws=5, horizon=12, jobs=3, seed=4)
    b = energy(num_data=12, num_features=3, draws=5, horizon=12, jobs=3, seed=4)
    assert a.features.shape == (12, 3) and a.targets["price"].shape == (12, 5, 12)
    assert np.array_equal(a.targets["price"], b.targets["price"]) and a.instance == b.instance
    assert (a.targets["price"] > 0).all()
    assert energy(num_data=3, seed=4, horizon=12, jobs=3).instance == a.instance


def test_noise_depends_on_the_features():
    data = energy(num_data=200, draws=64, noise=0.5, seed=1)
    spread = np.log(data.targets["price"]).std(1).mean(1)  # per-sample log-price spread
    assert spread.std() > 0.05 * spread.mean()
    assert np.allclose(energy(num_data=3, draws=4, noise=0.0).targets["price"].std(1), 0)


def test_the_instance_binds_and_solves(request):
    data = energy(num_data=2, draws=4, horizon=12, jobs=4, seed=3)
    instance = dict(data.instance, price=data.targets["price"][0].tolist())
    root = request.config.rootpath
    sol = dfl.load(root / EXAMPLE).bind(instance).solve()
    assert sol.status == "optimal"


@pytest.mark.parametrize("bad", [dict(num_data=0), dict(noise=-1.0), dict(horizon=2),
                                 dict(draws=1.5)])
def test_bad_arguments(bad):
    with pytest.raises(ValueError):
        energy(**bad)
