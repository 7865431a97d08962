"""Executors: the process pool and Ray actors give exactly the decisions of one warm model, and a
missing Ray or an unknown executor is a clear error."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from dfl_dsl.errors import DflError
from dfl_dsl.learn.executors import make_executor, solve_all, warm_model


def _costs(sp_inst, sp_generated, k: int = 12) -> np.ndarray:
    form = sp_inst.linear_form()
    theta = sp_generated.targets["cost"][:k].astype(float)
    return form.c + theta @ form.c_theta.toarray().T


def test_processes_match_one_model(sp_inst, sp_generated):
    form = sp_inst.linear_form()
    costs = _costs(sp_inst, sp_generated)
    expected = solve_all(warm_model(form, None), costs)
    executor = make_executor("processes", form, workers=2)
    try:
        np.testing.assert_allclose(executor.solve(costs), expected, atol=1e-9)
    finally:
        executor.close()


@pytest.fixture(scope="module")
def local_ray():
    ray = pytest.importorskip("ray")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    yield ray
    ray.shutdown()


def test_ray_actors_match_one_model(local_ray, sp_inst, sp_generated):
    form = sp_inst.linear_form()
    costs = _costs(sp_inst, sp_generated)
    expected = solve_all(warm_model(form, None), costs)
    executor = make_executor("ray", form, workers=3)
    try:
        assert executor.workers == 3
        np.testing.assert_allclose(executor.solve(costs), expected, atol=1e-9)
        # the actors stay warm: a second batch reuses them
        np.testing.assert_allclose(executor.solve(costs[::-1]), expected[::-1], atol=1e-9)
    finally:
        executor.close()


def test_missing_ray_is_a_clear_error(sp_inst, monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray -> ImportError
    with pytest.raises(DflError, match="needs Ray installed"):
        make_executor("ray", sp_inst.linear_form(), workers=2)


def test_unknown_executor(sp_inst):
    with pytest.raises(DflError, match="unknown executor `dask`"):
        make_executor("dask", sp_inst.linear_form(), workers=2)
