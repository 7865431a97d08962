"""The relaxed SCM polytope: linear maximization against linprog, projections checked by
their optimality condition, on one group (sorted breakpoints) and several (Newton), in numpy
(the CPU's arrays) and in torch (CUDA's, run here on the CPU)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.optimize as opt
import torch
from _helpers import scm_forms

from dfl_dsl.backends.aapga_arrays import NumpyOps, TorchOps
from dfl_dsl.backends.aapga_polytope import Polytope
from dfl_dsl.compile.scm import SCMForm

OPS = [NumpyOps(), TorchOps(torch.device("cpu"))]


def _polytope_rows(form: SCMForm):
    """P as linprog rows: A_ub x <= b_ub, 0 <= x <= u."""
    if form.kind in ("cardinality", "knapsack"):
        return form.cost[None, :], np.array([form.budget])
    if form.kind == "partition":
        rows = np.stack([(form.groups == g).astype(float) for g in range(len(form.group_caps))])
        return rows, form.group_caps
    return None, None


def _with_items_fixed_out(form: SCMForm) -> SCMForm:
    """The same form with every third item fixed at 0 (upper 0, as build_scm marks them)."""
    form.upper = np.where(np.arange(form.n) % 3 == 2, 0.0, 1.0)
    if form.kind == "cardinality":
        form.cost = np.where(form.upper > 0, 1.0, np.inf)
    return form


@pytest.mark.parametrize("ops", OPS)
@pytest.mark.parametrize("which", range(4))
def test_argmax_matches_linprog(which, ops):
    form = scm_forms()[which]
    P = Polytope(form, ops)
    A_ub, b_ub = _polytope_rows(form)
    rng = np.random.default_rng(which)
    for _ in range(5):
        g = rng.normal(size=form.n)
        v = ops.numpy(P.argmax(ops.asarray(g)[None])[0])
        ref = opt.linprog(-g, A_ub=A_ub, b_ub=b_ub, bounds=list(zip(0 * form.upper,
                                                                     form.upper, strict=True)))
        assert g @ v == pytest.approx(-ref.fun, abs=1e-9)
        assert form.feasible(v) and v.min() >= 0 and np.all(v <= form.upper + 1e-12)


@pytest.mark.parametrize("ops", OPS)
@pytest.mark.parametrize("fixed_out", [False, True])
@pytest.mark.parametrize("which", range(4))
def test_projection_is_the_nearest_point(which, fixed_out, ops):
    """x = proj(v) iff (v − x)ᵀ(y − x) <= 0 for every y in P, i.e. max_P (v − x)ᵀy is attained
    at x (checked with the LMO, itself checked against linprog above). Rows of the batch
    where the box alone is feasible (the last, v <= 0.2) take the other path."""
    form = scm_forms()[which]
    if fixed_out:
        form = _with_items_fixed_out(form)
    P = Polytope(form, ops)
    rng = np.random.default_rng(1)
    v = np.vstack([rng.normal(0.5, 1.0, (4, form.n)), rng.uniform(-1.0, 0.2, (1, form.n))])
    x = P.project(ops.asarray(v))
    d = ops.asarray(v) - x
    best, at_x = ops.numpy((P.argmax(d) * d).sum(axis=1)), ops.numpy((x * d).sum(axis=1))
    x = ops.numpy(x)
    assert all(form.feasible(row) for row in x)
    assert np.all(x >= 0) and np.all(x <= form.upper)
    assert np.all(best <= at_x + 1e-9)


@pytest.mark.parametrize("ops", OPS)
def test_one_group_projection_matches_the_newton_steps(ops):
    """The sorted-breakpoint projection (one group) and the Newton one (the same row as a
    partition with one part) agree on a knapsack with many ties at the breakpoints."""
    rng = np.random.default_rng(5)
    n = 200
    cost = rng.choice([0.5, 1.0, 2.0], n)
    X = rng.random((n, 4))
    knap = SCMForm.from_features(X, cost=cost, budget=7.0)
    v = ops.asarray(np.round(rng.normal(0.3, 0.5, (3, n)), 1))
    x = ops.numpy(Polytope(knap, ops).project(v))
    ones = SCMForm.from_features(X, k=7)
    part = SCMForm.from_features(X, groups=np.zeros(n, dtype=int), caps=np.array([7.0]))
    assert np.allclose(ops.numpy(Polytope(ones, ops).project(v)),
                       ops.numpy(Polytope(part, ops).project(v)), atol=1e-9)
    assert np.allclose(x @ cost, 7.0)


@pytest.mark.parametrize("ops", OPS)
@pytest.mark.parametrize("which", range(4))
def test_the_start_is_inside(which, ops):
    form = _with_items_fixed_out(scm_forms()[which])
    x = ops.numpy(Polytope(form, ops).inside()[0])
    assert form.feasible(x) and x.min() >= 0 and np.all(x <= 0.5 * form.upper)
    if form.kind == "cardinality":  # the projection of u/2: k/n on every live item
        assert np.allclose(x[form.upper > 0], form.budget / (form.upper > 0).sum())
