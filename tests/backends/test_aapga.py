"""The AAPGA backend: certified bounds, plain against accelerated ascent, the working set
against every item at once, and the spec's SCM models against greedy."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch
from _helpers import expected, scm_forms, spec_dir

import dfl_dsl as dfl
from dfl_dsl.backends.aapga import _working_set, maximize_relaxation
from dfl_dsl.backends.aapga_arrays import NumpyOps, TorchOps
from dfl_dsl.backends.aapga_polytope import Polytope
from dfl_dsl.backends.aapga_rounding import round_solution
from dfl_dsl.compile.scm import SCMForm

TORCH_CPU = TorchOps(torch.device("cpu"))  # CUDA's code path, run on the CPU


@pytest.mark.parametrize("which", range(3))
def test_bound_certifies_and_rounding_is_near_optimal(which):
    """By enumeration on 12 items: value <= optimum <= certified bound, and value close."""
    form = scm_forms()[which]
    frac, relax, bound, _ = maximize_relaxation(form, rtol=1e-4)
    x, value = round_solution(form, frac, seed=0)
    points = np.array(list(itertools.product([0.0, 1.0], repeat=form.n)))
    points = points[[form.feasible(p) for p in points]]
    best = float(form.value(points).max())
    assert form.feasible(x) and set(np.unique(x)) <= {0.0, 1.0}
    assert value == pytest.approx(form.value(x)[0])
    assert value <= best + 1e-9 <= bound + 1e-9 and relax <= bound + 1e-12
    assert value >= 0.95 * best


def test_plain_projected_gradient_reaches_the_same_relaxation():
    form = scm_forms()[0]
    fast = maximize_relaxation(form, rtol=1e-6)
    plain = maximize_relaxation(form, rtol=1e-6, accelerate=False)
    assert plain[1] == pytest.approx(fast[1], rel=1e-4)


def _wide(n: int = 600, seed: int = 0, **constraint) -> SCMForm:
    """Many more items than a set can hold: the working set starts as a small part."""
    rng = np.random.default_rng(seed)
    X = rng.exponential(1.0, (n, 40)) * (rng.random((n, 40)) < 0.1)
    return SCMForm.from_features(X, **constraint)


_CONSTRAINTS = [{"k": 5}, {"cost": np.random.default_rng(7).uniform(0.5, 1.5, 600), "budget": 5.0},
                {"groups": np.arange(600) % 4 - (np.arange(600) % 9 == 0),
                 "caps": np.array([2.0, 1.0, 3.0, 1.0])}]


@pytest.mark.parametrize("constraint", _CONSTRAINTS)
def test_working_set_reaches_the_relaxation_over_every_item(constraint):
    form = _wide(**constraint)
    grad = np.random.default_rng(0).random((1, form.n))
    work = _working_set(form, Polytope(form, NumpyOps()), grad)
    assert work is not None and len(work) < form.n // 2  # the ascent starts on a part
    screened = maximize_relaxation(form, rtol=1e-5)
    full = maximize_relaxation(form, rtol=1e-5, screen=False)
    assert screened[1] == pytest.approx(full[1], rel=1e-4)
    assert screened[1] <= full[2] + 1e-9 and full[1] <= screened[2] + 1e-9
    assert form.feasible(screened[0])


@pytest.mark.parametrize("seed", [4, 5])
def test_steps_that_empty_a_sqrt_row_are_shortened(seed):
    """Pixel counts with 4 rare features (digits' corners): a long first step emptied their
    rows, after which the line search needed L ~ 1e11 and took 67 and 51 steps (seeds 4, 5);
    refusing steps that drop a sqrt row below a quarter keeps it at a few."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 17, (400, 30)).astype(float) * (rng.random((400, 30)) < 0.5)
    X[:, :4] *= rng.random((400, 4)) < 0.01
    form = SCMForm.from_features(X, k=20)
    frac, relax, bound, steps = maximize_relaxation(form)
    assert steps <= 10 and relax <= bound
    coverable = form.A @ np.ones(form.n) > 0
    assert np.all((form.A @ frac)[coverable] > 0)  # the optimum covers every row it can


def test_no_working_set_without_caps():
    form = _wide()
    grad = np.ones((1, form.n))
    assert _working_set(form, Polytope(form, NumpyOps()), grad) is None


@pytest.mark.parametrize(("name", "share"), [("coverage", 0.97), ("coverage_knapsack", 0.95),
                                             ("coverage_partition", 0.97)])
def test_spec_models_reach_their_share_of_greedy(name, share):
    spec = spec_dir()
    sol = dfl.load(spec / f"{name}.opt").bind(spec / f"{name}.json").solve("aapga", seed=0)
    assert sol.status == "feasible"
    assert sol.objective >= share * expected()[name]["greedy_objective"]
    assert sol.objective <= sol.extra["relaxation_bound"] + 1e-9
    assert 0.0 <= sol.gap < 0.05


@pytest.mark.parametrize("constraint", _CONSTRAINTS)
def test_torch_arrays_take_the_steps_numpy_takes(constraint):
    """The ascent in torch (CUDA's code path), run on the CPU, against numpy's (the CPU's):
    the same steps to the same point, a working set and every item at once."""
    form = _wide(**constraint)
    for screen in (True, False):
        ours = maximize_relaxation(form, screen=screen)
        theirs = maximize_relaxation(form, screen=screen, device=TORCH_CPU)
        assert theirs[3] == ours[3] and theirs[1] == pytest.approx(ours[1], rel=1e-9)
        assert np.allclose(theirs[0], ours[0], atol=1e-7)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_cuda_matches_cpu():
    for form in (scm_forms()[0], _wide(k=5)):  # every item at once; a working set
        cpu = maximize_relaxation(form, rtol=1e-6)
        gpu = maximize_relaxation(form, rtol=1e-6, device="cuda")
        assert gpu[1] == pytest.approx(cpu[1], rel=2e-6)  # both within 1e-6 of the optimum


def test_no_concave_term_left_by_the_data_is_the_linear_part_alone():
    # fuzz (spec coverage with FEATURES = []): the relaxation took min() of no atoms
    # ("zero-size array to reduction operation minimum", exit 3)
    text = """set ITEMS; set FEATURES; param feat{ITEMS, FEATURES} >= 0; param c{ITEMS};
var x{ITEMS} binary;
maximize f: sum{f in FEATURES} sqrt(sum{i in ITEMS} feat[i, f] * x[i])
    + sum{i in ITEMS} c[i] * x[i];
subject to card: sum{i in ITEMS} x[i] <= 2;
"""
    data = {"ITEMS": [1, 2, 3, 4], "FEATURES": [], "feat": {}, "c": [3, -1, 5, 4]}
    solution = dfl.parse(text).bind(data).solve("aapga")
    linear = dfl.parse("set ITEMS; param c{ITEMS}; var x{ITEMS} binary;\nmaximize f: "
                       "sum{i in ITEMS} c[i] * x[i];\nsubject to card: sum{i in ITEMS} x[i] <= 2;")
    assert solution.objective == pytest.approx(9.0)
    assert linear.bind(data).solve("highs").objective == pytest.approx(9.0)
