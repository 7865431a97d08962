"""Fixtures for the learning tests: the pick-one-of-three problem in each formulation and a
small shortest-path data set from the PyEPO-compatible generator."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from _helpers import bind
from _learn_helpers import PICK_MAX, PICK_MIN, PICK_PROFIT, SHORTEST_PATH, Pick

import dfl_dsl as dfl
from dfl_dsl.generators import shortest_path
from dfl_dsl.learn.dataset import DFLData
from dfl_dsl.learn.trainer import Trainer


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


@pytest.fixture
def split(sp_inst, sp_generated):
    """The shortest-path samples as 200 training and the rest test samples."""
    train, test = sp_generated.split(200)
    return (DFLData.from_arrays(sp_inst, train.arrays()),
            DFLData.from_arrays(sp_inst, test.arrays()))


@pytest.fixture
def trained(sp_inst, split):
    """A predictor trained one quick epoch: what the checkpoint tests save and load."""
    train, _ = split
    trainer = Trainer(sp_inst, "spo+", epochs=1, batch_size=32, lr=1e-2, seed=5, progress=False,
                      predictor="mlp", hidden=8)
    trainer.fit(train.subset(np.arange(64)))
    return trainer


@pytest.fixture
def torch_load_calls(monkeypatch) -> list[dict]:
    """The keyword arguments of every `torch.load` in the test (a spy that still loads)."""
    calls: list[dict] = []
    real_load = torch.load

    def spy(*args, **kwargs):
        calls.append(kwargs)
        return real_load(*args, **kwargs)

    monkeypatch.setattr(torch, "load", spy)
    return calls
