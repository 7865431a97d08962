"""The oracle's solvers: the batched one gives HiGHS's optimal objectives (to 1e-9 relative) on
the acceptance LPs and on an integer model whose relaxation is integral, for 1,000 random cost
vectors each, with at most 1 % of the samples handed to HiGHS; warm starts and fallbacks are
counted; the capability declarations say what each takes."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from _helpers import spec_dir

import dfl_dsl as dfl
from dfl_dsl.backends.batchlp import Settings
from dfl_dsl.compile.unimodular import integral_relaxation
from dfl_dsl.learn.oracle import BATCHED_FROM, Oracle
from dfl_dsl.learn.solvers import BatchedSolver, EnumerationSolver, HighsSolver


def _spec_form(name: str, binary: bool = False):
    spec = spec_dir()
    text = (spec / f"{name}.opt").read_text()
    if binary:  # the same network with 0/1 flows: a MILP whose relaxation is integral
        text = text.replace("in [0, 1]", "binary")
    return dfl.parse(text, f"{name}.opt").bind(spec / f"{name}.json").linear_form()


@pytest.mark.parametrize("name, binary", [("transport", False), ("shortest_path", False),
                                          ("shortest_path", True)])
def test_batched_objectives_equal_highs_on_1000_cost_vectors(name, binary):
    form = _spec_form(name, binary)
    assert form.is_mip == binary
    if binary:
        assert integral_relaxation(form) is None
    rng = np.random.default_rng(17)
    costs = (np.abs(form.c) + 1.0) * rng.uniform(0.2, 1.8, (1000, form.n))
    highs = HighsSolver(form)
    batched = BatchedSolver(form, HighsSolver(form))
    want = (costs * highs.solve(torch.as_tensor(costs)).numpy()).sum(1)
    got = (costs * batched.solve(torch.as_tensor(costs)).numpy()).sum(1)
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=0)
    assert batched.stats()["fallbacks"] <= 10  # at most 1 %
    if binary:
        w = batched.solve(torch.as_tensor(costs[:50])).numpy()
        np.testing.assert_array_equal(w, np.round(w))


def test_samples_it_cannot_certify_go_to_highs_and_are_counted():
    form = _spec_form("shortest_path")
    costs = np.random.default_rng(2).uniform(0.5, 2.0, (8, form.n))
    starved = BatchedSolver(form, HighsSolver(form), settings=Settings(ipm_iterations=1))
    got = starved.solve(torch.as_tensor(costs)).numpy()
    want = HighsSolver(form).solve(torch.as_tensor(costs)).numpy()
    np.testing.assert_allclose((costs * got).sum(1), (costs * want).sum(1), rtol=1e-12)
    assert starved.stats()["fallbacks"] == 8


def test_warm_starts_are_kept_per_slot_and_key():
    form = _spec_form("shortest_path")
    solver = BatchedSolver(form, HighsSolver(form),
                           settings=Settings(method="pdhg", check_every=16))
    costs = torch.as_tensor(np.random.default_rng(4).uniform(0.5, 2.0, (6, form.n)))
    keys = torch.arange(6)
    first = solver.solve(costs, keys, "a")
    iterations = solver.iterations
    again = solver.solve(costs, keys, "a")  # same costs, warm: certified without iterating
    assert solver.iterations == iterations
    torch.testing.assert_close(again, first)
    solver.solve(costs, keys, "b")  # another slot starts cold
    assert solver.iterations > iterations


def test_capabilities_declare_forms_exactness_and_devices():
    assert HighsSolver.capabilities.forms >= {"LP", "MILP"}
    assert BatchedSolver.capabilities.devices == {"cpu", "cuda"}
    assert all(s.capabilities.exact for s in (HighsSolver, EnumerationSolver, BatchedSolver))


def test_auto_on_a_cpu_sends_small_batches_to_highs_and_large_ones_batched():
    spec = spec_dir()
    inst = dfl.load(spec / "shortest_path.opt").bind(spec / "shortest_path.json")
    oracle = Oracle(inst)
    assert oracle.method == "highs+batched"
    theta = np.random.default_rng(0).uniform(0.5, 2.0, (BATCHED_FROM, oracle.n_theta))
    small = oracle.solve_theta(theta[:8])
    large = oracle.solve_theta(theta)
    stats = oracle.stats()
    assert (stats["highs_solves"], stats["batched_solves"]) == (8, BATCHED_FROM)
    np.testing.assert_allclose(large.objective[:8], small.objective, rtol=1e-9)
    # workers asked for mean HiGHS for every batch
    assert Oracle(inst, processes=2).method == "highs"
