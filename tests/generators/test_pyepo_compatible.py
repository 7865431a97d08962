"""The PyEPO-compatible generators: the same arrays as pyepo.data.*.genData for the same
arguments, instance data that binds to the example models, and argument validation."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from _helpers import spec_dir

import dfl_dsl as dfl
from dfl_dsl.generators import GENERATORS, knapsack, portfolio, shortest_path
from dfl_dsl.generators.pyepo_compatible import GeneratedData, grid_arcs

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.fixture(scope="module")
def pyepo_data():
    pytest.importorskip("pyepo")
    import pyepo.data

    return pyepo.data


@pytest.mark.parametrize("args", [
    dict(num_data=10, num_features=5, grid=(5, 5), deg=1, noise_width=0.0, seed=135),
    dict(num_data=25, num_features=3, grid=(3, 4), deg=4, noise_width=0.5, seed=1),
    dict(num_data=7, num_features=8, grid=(6, 2), deg=6, noise_width=0.2, seed=2024),
])
def test_shortest_path_matches_pyepo(pyepo_data, args):
    x, c = pyepo_data.shortestpath.genData(**args)
    ours = shortest_path(**args)
    np.testing.assert_array_equal(ours.features, x)
    np.testing.assert_array_equal(ours.targets["cost"], c)
    assert ours.targets["cost"].dtype == c.dtype == np.float32


def test_shortest_path_arcs_in_pyepos_order():
    pytest.importorskip("pyepo")
    from pyepo.model.omo import shortestPathModel

    for grid in ((5, 5), (3, 4)):
        try:
            model = shortestPathModel(grid=grid, solver="appsi_highs")
        except Exception as exc:  # pragma: no cover - a pyomo without HiGHS
            pytest.skip(f"pyepo's shortest path model needs appsi_highs: {exc}")
        assert grid_arcs(*grid) == [tuple(a) for a in model.arcs]


@pytest.mark.parametrize("args", [
    dict(num_data=10, num_features=5, num_items=32, dim=2, deg=1, noise_width=0.0, seed=135),
    dict(num_data=12, num_features=4, num_items=10, dim=1, deg=3, noise_width=0.5, seed=7),
    dict(num_data=5, num_features=6, num_items=20, dim=3, deg=2, noise_width=0.1, seed=99),
])
def test_knapsack_matches_pyepo(pyepo_data, args):
    weights, x, c = pyepo_data.knapsack.genData(**args)
    ours = knapsack(**args)
    np.testing.assert_array_equal(ours.features, x)
    np.testing.assert_array_equal(ours.targets["value"], c)
    np.testing.assert_array_equal(np.asarray(ours.instance["weight"]), weights)
    assert ours.instance["capacity"] == [20.0] * args["dim"]


@pytest.mark.parametrize("args", [
    dict(num_data=10, num_features=5, num_assets=50, deg=1, noise_level=1.0, seed=135),
    dict(num_data=8, num_features=3, num_assets=12, deg=4, noise_level=0.5, seed=3),
    dict(num_data=6, num_features=7, num_assets=5, deg=2, noise_level=2.0, seed=42),
])
def test_portfolio_matches_pyepo(pyepo_data, args):
    cov, x, r = pyepo_data.portfolio.genData(**args)
    ours = portfolio(**args)
    np.testing.assert_array_equal(ours.features, x)
    np.testing.assert_array_equal(ours.targets["ret"], r)
    np.testing.assert_array_equal(np.asarray(ours.instance["cov"]), cov)
    # PyEPO's portfolio model: risk budget = gamma · mean(cov), gamma = 2.25
    assert ours.instance["gamma"] == pytest.approx(2.25 * cov.mean(), rel=1e-12)
    assert ours.instance["n"] == args["num_assets"]


@pytest.mark.parametrize(("fn", "args", "words"), [
    (shortest_path, {"deg": 0}, "deg must be a positive integer"),
    (shortest_path, {"deg": 1.5}, "deg must be a positive integer"),
    (shortest_path, {"noise_width": -0.1}, "noise must be a finite number >= 0"),
    (shortest_path, {"noise_width": float("nan")}, "noise must be a finite number >= 0"),
    (shortest_path, {"num_data": 0}, "num_data must be a positive integer"),
    (shortest_path, {"grid": (0, 5)}, "grid_rows must be a positive integer"),
    (shortest_path, {"grid": (5,)}, "grid must be \\(rows, cols\\)"),
    (shortest_path, {"grid": (1, 1)}, "a 1x1 grid has no arcs"),
    (knapsack, {"noise_width": -1.0}, "noise must be"),
    (knapsack, {"num_items": 0}, "num_items must be a positive integer"),
    (knapsack, {"dim": -1}, "dim must be a positive integer"),
    (portfolio, {"noise_level": float("inf")}, "noise must be"),
    (portfolio, {"num_features": 0}, "num_features must be a positive integer"),
    (portfolio, {"deg": -2}, "deg must be a positive integer"),
])
def test_bad_arguments_are_value_errors(fn, args, words):
    with pytest.raises(ValueError, match=words):
        fn(num_data=args.pop("num_data", 4), **args)


def test_split_and_arrays():
    data = shortest_path(num_data=10, grid=(2, 2), seed=5)
    assert isinstance(data, GeneratedData)
    first, rest = data.split(7)
    assert len(first.features) == 7 and len(rest.features) == 3
    np.testing.assert_array_equal(rest.targets["cost"], data.targets["cost"][7:])
    assert set(data.arrays()) == {"features", "cost"}
    renamed = shortest_path(num_data=3, grid=(2, 2), param="arc_cost")
    assert set(renamed.arrays()) == {"features", "arc_cost"}
    assert {"shortest_path", "knapsack", "portfolio"} <= set(GENERATORS)


def test_instances_bind_to_the_example_models():
    sp = shortest_path(num_data=2, grid=(3, 3), seed=1)
    inst = dfl.load(EXAMPLES / "shortest_path" / "shortest_path.opt").bind(
        {**sp.instance, "cost": sp.targets["cost"][0].tolist()})
    sol = inst.solve("highs")
    assert sol.status == "optimal" and sum(np.asarray(sol.value("flow"))) == pytest.approx(4.0)

    ks = knapsack(num_data=2, num_items=6, dim=2, seed=1, capacity=10)
    inst = dfl.load(EXAMPLES / "knapsack" / "knapsack.opt").bind(
        {**ks.instance, "value": ks.targets["value"][0].tolist()})
    sol = inst.solve("highs")
    picked = np.asarray(sol.value("pick"))
    assert sol.status == "optimal" and (np.asarray(ks.instance["weight"]) @ picked <= 10).all()

    pf = portfolio(num_data=2, num_assets=6, seed=1)
    inst = dfl.load(spec_dir() / "portfolio.opt").bind(
        {**pf.instance, "ret": pf.targets["ret"][0].tolist()})
    sol = inst.solve()
    assert sol.status == "optimal"
    assert np.asarray(sol.value("w")).sum() == pytest.approx(1.0, abs=1e-6)


@pytest.mark.parametrize("name", ["shortest_path", "knapsack", "portfolio", "energy",
                                  "portfolio_cvar", "shortest_path_cvar"])
def test_a_data_set_beyond_the_size_cap_is_refused_before_allocating(name):
    with pytest.raises(ValueError, match="100,000,000,000 samples would have .* entries"):
        GENERATORS[name](num_data=10**11)
