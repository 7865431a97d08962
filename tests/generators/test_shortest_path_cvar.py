"""The Gen-DFL shortest-path generator: PyEPO's arc costs with draws per sample, and the
example model that decides on them."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

import dfl_dsl as dfl
from dfl_dsl.generators import shortest_path
from dfl_dsl.generators.shortest_path_cvar import shortest_path_cvar
from dfl_dsl.learn.gen_dfl import ScenarioObjective
from dfl_dsl.learn.scenario_oracle import ScenarioOracle

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
MODEL = EXAMPLES / "shortest_path_cvar" / "shortest_path_cvar.opt"


def test_shapes_and_instance():
    data = shortest_path_cvar(num_data=7, grid=(3, 4), draws=5, alpha=0.8)
    assert data.features.shape == (7, 5) and data.targets["cost"].shape == (7, 5, 17)
    assert len(data.instance["ARCS"]) == 17 and data.instance["sink"] == 11
    assert data.instance["alpha"] == 0.8


def test_first_draw_is_pyepos_array_and_the_rest_share_its_mean():
    """Draw 0 is PyEPO's data set for the same arguments; every draw is the noise-free cost
    times U[1 - ε, 1 + ε], so draw / mean stays in that band and averages to 1."""
    ours = shortest_path_cvar(num_data=50, deg=6, noise_width=0.5, draws=400, seed=3)
    pyepo = shortest_path(num_data=50, deg=6, noise_width=0.5, seed=3)
    assert np.array_equal(ours.features, pyepo.features)
    draws = ours.targets["cost"]
    assert np.allclose(draws[:, 0], pyepo.targets["cost"], rtol=1e-6)
    noiseless = shortest_path_cvar(num_data=50, deg=6, noise_width=0.0, draws=1, seed=3)
    ratio = draws / noiseless.targets["cost"]
    assert ratio.min() >= 0.5 and ratio.max() <= 1.5
    assert abs(ratio.mean() - 1.0) < 0.005 and abs(ratio.std() - 1 / np.sqrt(12)) < 0.005


def test_without_noise_the_cvar_route_is_the_shortest_path():
    """With ε = 0 every scenario is the same cost vector, so the CVaR of a route is its length
    and the scenario problem's decision is the deterministic shortest path."""
    data = shortest_path_cvar(num_data=4, grid=(4, 4), deg=2, noise_width=0.0, draws=6, seed=1)
    inst = dfl.load(MODEL).bind(data.instance)
    routes = ScenarioOracle(inst, 6).solve(data.targets["cost"])
    path_model = dfl.load(EXAMPLES / "shortest_path" / "shortest_path.opt")
    for route, costs in zip(routes, data.targets["cost"][:, 0], strict=True):
        sol = path_model.bind({**data.instance, "cost": costs.tolist()}).solve("highs")
        assert route @ costs == pytest.approx(sol.objective, rel=1e-9)


def test_cvar_splits_the_route_when_that_lowers_the_tail():
    """Two disjoint routes on a 2 × 2 grid with equal mean length whose costs move in opposite
    directions: any single route has CVaR₀.₅ 3, the even split has a constant length 2."""
    data = shortest_path_cvar(num_data=1, grid=(2, 2), draws=2, alpha=0.5)
    inst = dfl.load(MODEL).bind(data.instance)
    # arcs in PyEPO's order: 0->1, 0->2, 1->3, 2->3; route A = 0->1->3, route B = 0->2->3
    xi = np.array([[[3.0, 1.0, 0.0, 0.0], [1.0, 3.0, 0.0, 0.0]]])
    route = ScenarioOracle(inst, 2).solve(xi)
    assert route[0] == pytest.approx([0.5, 0.5, 0.5, 0.5])
    value = ScenarioObjective(inst).value(torch.as_tensor(route), torch.as_tensor(xi))
    assert float(value[0]) == pytest.approx(2.0)


@pytest.mark.parametrize("bad", [dict(grid=(1, 1)), dict(grid=(5,)), dict(draws=0),
                                 dict(noise_width=-0.1), dict(alpha=1.0), dict(deg=0)])
def test_bad_arguments(bad):
    with pytest.raises(ValueError):
        shortest_path_cvar(**bad)
