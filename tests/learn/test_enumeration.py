"""Listing the feasible points of a small pure-integer model: the same set as brute force over
the box, refusals where listing can't work, and an oracle whose answers match HiGHS."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch
from _helpers import bind
from _learn_helpers import EXAMPLES

import dfl_dsl as dfl
from dfl_dsl.errors import DflError
from dfl_dsl.generators import knapsack
from dfl_dsl.learn import enumeration
from dfl_dsl.learn.enumeration import feasible_points, why_not_enumerable
from dfl_dsl.learn.oracle import Oracle

MIXED_ROWS = """
set I; set R;
param a{R, I}; param hi{R}; param lo{R}; param total;
param c{I} : predicted;
var x{I} integer >= -1 <= 2;
minimize f: sum{i in I} c[i] * x[i];
s.t. up{r in R}: sum{i in I} a[r, i] * x[i] <= hi[r];
s.t. down{r in R}: sum{i in I} a[r, i] * x[i] >= lo[r];
s.t. fixed_total: sum{i in I} x[i] == total;
"""


def _brute_force(form) -> set[tuple]:
    lb, ub = np.ceil(form.lb), np.floor(form.ub)
    A = form.A.toarray()
    found = set()
    domains = [range(int(lo), int(hi) + 1) for lo, hi in zip(lb, ub, strict=True)]
    for point in itertools.product(*domains):
        activity = A @ np.asarray(point, dtype=float)
        if np.all(activity <= form.ru + 1e-9) and np.all(activity >= form.rl - 1e-9):
            found.add(point)
    return found


@pytest.mark.parametrize("seed", range(6))
def test_the_listing_is_exactly_the_brute_force_set(seed):
    rng = np.random.default_rng(seed)
    items, rows = 6, 2
    a = rng.integers(-3, 4, size=(rows, items)).astype(float)
    data = {"I": list(range(items)), "R": list(range(rows)), "a": a.tolist(),
            "hi": rng.integers(0, 5, rows).tolist(), "lo": rng.integers(-6, 0, rows).tolist(),
            "total": int(rng.integers(0, 5))}
    form = bind(MIXED_ROWS, data).linear_form()
    points = feasible_points(form)
    assert points is not None
    listed = {tuple(int(v) for v in p) for p in points}
    assert len(listed) == len(points)  # no point listed twice
    expected = _brute_force(form)
    assert expected  # the seeds give non-empty sets, so the comparison means something
    assert listed == expected


def test_an_infeasible_box_lists_nothing():
    form = bind("var x{1..3} binary; minimize f: sum{i in 1..3} x[i]; "
                "s.t. r: sum{i in 1..3} x[i] >= 4;").linear_form()
    assert feasible_points(form).shape == (0, 3)


@pytest.mark.parametrize(("text", "words"), [
    ("var x{1..3} binary; var y >= 0; minimize f: y + sum{i in 1..3} x[i];", "continuous"),
    ("var x{1..3} integer >= 0; minimize f: sum{i in 1..3} x[i];", "finite bound"),
    ("var x{1..3} integer >= 0 <= 1000; minimize f: sum{i in 1..3} x[i];", "values"),
], ids=["continuous", "unbounded", "wide-domain"])
def test_models_that_cannot_be_listed_say_why(text, words):
    form = bind(text).linear_form()
    assert words in why_not_enumerable(form)
    assert feasible_points(form) is None


def test_a_feasible_set_past_the_limit_gives_up():
    form = bind("var x{1..16} binary; minimize f: sum{i in 1..16} x[i];").linear_form()
    assert feasible_points(form, max_points=1000) is None  # 2^16 points, no row to prune them
    assert feasible_points(form, max_points=2 ** 16).shape == (2 ** 16, 16)


def test_the_expansion_limit_guards_memory(monkeypatch):
    monkeypatch.setattr(enumeration, "MAX_EXPANSION", 100)
    form = bind("var x{1..10} binary; minimize f: sum{i in 1..10} x[i];").linear_form()
    assert feasible_points(form) is None


def test_the_oracle_matches_highs_on_a_knapsack():
    data = knapsack(num_data=64, num_items=20, dim=2, deg=4, noise_width=0.5, seed=3)
    inst = dfl.load(EXAMPLES / "knapsack" / "knapsack.opt").bind(data.instance)
    listed, highs = Oracle(inst, method="enumerate"), Oracle(inst, method="highs")
    assert (listed.method, highs.method) == ("enumerate", "highs")
    assert Oracle(inst).method == "enumerate"  # auto picks the listing when it fits
    rng = np.random.default_rng(0)
    values = data.targets["value"].astype(float)
    theta = torch.as_tensor(np.vstack([values, 2 * rng.normal(size=values.shape) - values]))
    a, b = listed.solve_theta(theta), highs.solve_theta(theta)
    np.testing.assert_allclose(a.objective, b.objective, rtol=1e-9, atol=1e-9)
    A, _, ru = listed.form.rows_at(None)
    assert np.all(A @ a.w.T <= ru[:, None] + 1e-9)  # every decision is feasible
    assert listed.solver_calls == len(theta)


def test_the_oracle_refuses_to_enumerate_what_it_cannot():
    inst = bind("param c{1..2} : predicted; var x{1..2} >= 0 <= 1; "
                "minimize f: sum{i in 1..2} c[i] * x[i];")
    with pytest.raises(DflError, match="continuous"):
        Oracle(inst, method="enumerate")
    # an LP: HiGHS for small batches, the batched solver for large ones
    assert Oracle(inst).method == "highs+batched"
    with pytest.raises(DflError, match="unknown oracle method"):
        Oracle(inst, method="guess")


def test_an_infeasible_model_is_a_clear_error():
    inst = bind("param c{1..2} : predicted; var x{1..2} binary; "
                "minimize f: sum{i in 1..2} c[i] * x[i]; s.t. r: x[1] + x[2] >= 3;")
    with pytest.raises(DflError, match="no feasible point") as info:
        Oracle(inst)
    assert "dfl solve" in info.value.hint  # (as HiGHS's infeasible answer says; it had none)
