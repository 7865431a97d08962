"""Fixtures for the learning tests: the pick-one-of-three problem in each formulation and a
small shortest-path data set from the PyEPO-compatible generator."""

from __future__ import annotations

import pytest
from _helpers import bind
from _learn_helpers import PICK_MAX, PICK_MIN, PICK_PROFIT, SHORTEST_PATH, Pick

import dfl_dsl as dfl
from dfl_dsl.generators import shortest_path


@pytest.fixture(params=["min", "max", "profit"])
def pick(request) -> Pick:
    text = {"min": PICK_MIN, "max": PICK_MAX, "profit": PICK_PROFIT}[request.param]
    return Pick(request.param, bind(text, {"I": [1, 2, 3]}), -1.0 if request.param == "profit"
                else 1.0)


@pytest.fixture
def pick_min():
    return bind(PICK_MIN, {"I": [1, 2, 3]})


@pytest.fixture(scope="session")
def sp_generated():
    """300 shortest-path samples (5×5 grid, 40 arcs, 5 features), PyEPO's formulas."""
    return shortest_path(num_data=300, num_features=5, grid=(5, 5), deg=2, noise_width=0.5,
                         seed=11)


@pytest.fixture(scope="session")
def sp_inst(sp_generated):
    return dfl.load(SHORTEST_PATH).bind(sp_generated.instance)
