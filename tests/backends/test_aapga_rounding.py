"""Rounding an SCM relaxation: batched pipage, marginal gains, greedy fill and swaps on the
support, the fill over every item when the support runs out, and determinism."""

from __future__ import annotations

import numpy as np
import pytest
from _helpers import scm_forms

from dfl_dsl.backends.aapga import maximize_relaxation
from dfl_dsl.backends.aapga_rounding import (
    _Columns,
    _fill,
    _gains,
    _pipage,
    _scores,
    _swap,
    _swap_change,
    round_solution,
)
from dfl_dsl.compile.scm import SCMForm


def test_pipage_keeps_each_rows_group_sums_and_ends_integral():
    rng = np.random.default_rng(3)
    group = rng.integers(0, 3, 30)
    x = np.minimum(rng.dirichlet(np.ones(30), size=4) * 9.0, 1.0)
    sums = np.stack([x[:, group == g].sum(1) for g in range(3)], 1)
    _pipage(x, group, rng)
    assert set(np.unique(x)) <= {0.0, 1.0}
    after = np.stack([x[:, group == g].sum(1) for g in range(3)], 1)
    assert np.all(np.floor(sums + 1e-9) <= after) and np.all(after <= np.ceil(sums - 1e-9))


def test_pipage_keeps_a_weighted_sum():
    """Cost-weighted moves: Σ c·x stays, up to the last fractional item (rounded down)."""
    rng = np.random.default_rng(0)
    cost = rng.uniform(0.5, 2.0, 6)
    frac = np.array([0.5, 0.25, 0.75, 0.4, 0.6, 0.5])
    x = np.tile(frac, (2000, 1))
    _pipage(x, np.zeros(6, dtype=np.int64), rng, cost)
    assert set(np.unique(x)) <= {0.0, 1.0}
    assert np.all(x @ cost <= frac @ cost + 1e-9)
    assert np.all(x @ cost >= frac @ cost - cost.max() - 1e-9)


def test_pipage_keeps_each_expectation():
    """An integral sum leaves no last fractional item: over many rows (one batched call)
    each coordinate's mean is its fraction (4 standard errors at most)."""
    rng = np.random.default_rng(0)
    frac = np.array([0.5, 0.25, 0.75, 0.4, 0.6, 0.5])  # sums to 3
    x = np.tile(frac, (20000, 1))
    _pipage(x, np.zeros(6, dtype=np.int64), rng)
    assert np.all(x.sum(1) == 3.0)
    assert np.all(np.abs(x.mean(0) - frac) <= 4 * np.sqrt(frac * (1 - frac) / 20000))


def test_gains_match_differences_of_values():
    form = scm_forms()[1]
    x = (np.random.default_rng(4).random(form.n) < 0.3).astype(float)
    t = form.A @ x + form.b
    cols = np.arange(form.n)
    up = np.array([form.value(np.where(cols == i, 1.0, x))[0] for i in cols]) - form.value(x)[0]
    down = np.array([form.value(np.where(cols == i, 0.0, x))[0] for i in cols]) - form.value(x)[0]
    assert np.allclose(_gains(form, t, cols)[0][x < 0.5], up[x < 0.5])
    assert np.allclose(_gains(form, t, cols, -1.0)[0][x > 0.5], down[x > 0.5])
    at = _scores(form, _Columns(form), x)  # the swaps' one pass: gains outside, losses inside
    assert np.allclose(at.t, t) and np.allclose(at.gain, np.where(x > 0.5, down, up))


@pytest.mark.parametrize("which", range(3))
def test_swap_change_matches_differences_of_values(which):
    form = scm_forms(n=20, seed=which)[which]
    x = (np.random.default_rng(which).random(form.n) < 0.4).astype(float)
    out, into = np.nonzero(x > 0.5)[0], np.nonzero(x < 0.5)[0]
    ref = np.array([[form.value(np.where(np.isin(np.arange(form.n), [a, b]), 1.0 - x, x))[0]
                     for b in into] for a in out]) - form.value(x)[0]
    cols = _Columns(form)
    assert np.allclose(_swap_change(form, cols, _scores(form, cols, x), out, into), ref)


@pytest.mark.parametrize("which", range(3))
def test_fill_is_the_greedy_and_swaps_only_improve(which):
    """From the empty set the fill picks, step by step, the feasible item of largest gain
    (per cost for a knapsack), as a plain greedy that recomputes every gain does."""
    form = scm_forms(n=30, seed=which)[which]
    x, gained = _fill(form, np.zeros(form.n))
    ref = np.zeros(form.n)
    per = form.cost if form.kind == "knapsack" else np.ones(form.n)
    while True:
        t = form.A @ ref + form.b
        fits = np.array([form.feasible(np.where(np.arange(form.n) == i, 1.0, ref))
                         for i in range(form.n)]) & (ref < 0.5)
        score = np.where(fits, _gains(form, t, np.arange(form.n))[0] / per, -np.inf)
        if not fits.any() or score.max() <= 1e-12:
            break
        ref[int(np.argmax(score))] = 1.0
    assert np.array_equal(x, ref)
    assert gained == pytest.approx(form.value(x)[0] - form.value(np.zeros(form.n))[0])
    swapped, value = _swap(form, x, 20)
    assert form.feasible(swapped) and form.value(swapped)[0] >= form.value(x)[0] - 1e-12
    assert value == pytest.approx(form.value(swapped)[0])  # F(x) plus the swaps' changes


@pytest.mark.parametrize("which", range(3))
def test_swaps_stop_at_a_pass_that_gains_too_little(which):
    """With `rtol` at 1 (a pass must double F) the swaps stop after the first pass, as one
    pass does; with 0 they go on while any swap improves and end no worse."""
    form = scm_forms(n=30, seed=which)[which]
    start = np.zeros(form.n)
    start[np.argmin(form.value(np.eye(form.n)))] = 1.0  # the worst item first: swaps have work
    x, _ = _fill(form, start)
    once, value = _swap(form, x, 1)
    stopped, stopped_value = _swap(form, x, 20, rtol=1.0)
    full, full_value = _swap(form, x, 20, rtol=0.0)
    assert np.array_equal(once, stopped) and stopped_value == pytest.approx(value)
    assert form.value(x)[0] - 1e-12 <= stopped_value <= full_value + 1e-12


def test_fill_reaches_past_a_support_that_is_too_small():
    """A fractional point on 2 items under k = 4: the other 2 come from every item."""
    X = np.random.default_rng(2).random((40, 6))
    form = SCMForm.from_features(X, k=4)
    frac = np.zeros(40)
    frac[[3, 7]] = 1.0
    x, value = round_solution(form, frac, seed=0)
    assert x.sum() == 4 and x[3] == 1.0 and x[7] == 1.0
    assert value == pytest.approx(form.value(x)[0])


def test_rounding_without_a_seed_gives_the_same_answer_every_run():
    # one rounding, no swaps: on this form seeds 0..9 give several different sets, so a fresh
    # seed per run (what None used to mean) would differ between 12 runs but by chance
    rng = np.random.default_rng(1)
    X = rng.exponential(1.0, (12, 5)) * (rng.random((12, 5)) < 0.6)
    form = SCMForm.from_features(X, phi="log1p", cost=rng.uniform(0.5, 2.0, 12), budget=2.5)
    frac = maximize_relaxation(form, rtol=1e-4)[0]
    by_seed = {tuple(round_solution(form, frac, seed=s, roundings=1, max_swaps=0)[0])
               for s in range(10)}
    assert len(by_seed) > 1
    runs = {tuple(round_solution(form, frac, roundings=1, max_swaps=0)[0]) for _ in range(12)}
    assert runs == {tuple(round_solution(form, frac, seed=0, roundings=1, max_swaps=0)[0])}


def test_a_relaxed_point_outside_the_polytope_still_rounds_to_a_feasible_set():
    # fuzz (`solved` 4011412): a cost of 1e-320 broke the projection (1/c = inf) and the
    # relaxed point spent 12 times the budget; pipage keeps Σ c·x, so every rounding broke
    # the row too, and AAPGA stopped on "rounding broke feasibility" (exit 3)
    rng = np.random.default_rng(4)
    X = rng.exponential(1.0, (30, 6))
    cost = rng.uniform(1.0, 3.0, 30)
    form = SCMForm.from_features(X, phi="log1p", cost=cost, budget=10.0)
    x, value = round_solution(form, np.ones(30), seed=0)
    assert form.feasible(x) and x.sum() >= 3
    assert value == pytest.approx(form.value(x)[0])
