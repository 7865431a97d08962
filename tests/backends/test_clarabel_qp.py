"""Clarabel on a LinearForm (clarabel_qp): the last resort of highs.verified, its duals in
HiGHS's convention so that common.kkt_residuals judges them, and its unboundedness ray
checked before it is believed."""

from __future__ import annotations

import json

import numpy as np
import pytest
from _helpers import bind, spec_dir

from dfl_dsl.backends import clarabel_qp
from dfl_dsl.backends.common import kkt_residuals

# min ½(x₁² + x₂²) − 1.5 x₁ − 1.5 x₂ s.t. x₁ + x₂ <= 1.5, x >= 0, x₁ == x₂: optimum −1.6875
SMALL = """var x{0..1} >= 0;
minimize f: 0.5 * (x[0]^2 + x[1]^2) - 1.5 * x[0] - 1.5 * x[1];
s.t. total: x[0] + x[1] <= 1.5;
s.t. same: x[0] - x[1] == 0;
"""
# x₂ is free and only its linear cost −1 reaches it: unbounded along (0, 1)
UNBOUNDED = """var x{0..1};
minimize f: 0.5 * x[0]^2 - x[1];
s.t. r: x[0] - 0 * x[1] <= 1;
"""


def test_an_optimum_with_duals_that_pass_the_kkt_check():
    form = bind(SMALL).linear_form()
    raw = clarabel_qp.solve_form(form)
    assert raw.status == "optimal" and raw.objective == pytest.approx(-1.6875, rel=1e-7)
    assert np.allclose(raw.x, [0.75, 0.75], atol=1e-6)
    assert kkt_residuals(form, raw.x, raw.row_duals, raw.col_duals).holds()


def test_an_approximate_ray_is_no_proof_and_highs_unbounded_stands():
    """Clarabel's ray here, (−0.0048, 1.02), curves (dᵀPd = 2.3e-5): not taken as a proof
    (clarabel_qp.proves_unbounded is strict), so `verified` never turns an answer into
    `unbounded` on it; HiGHS's own `unbounded` (not re-solved into an optimum) stands."""
    raw = clarabel_qp.solve_form(bind(UNBOUNDED).linear_form())
    assert raw.status == "error" and "ray fails the check" in raw.message
    assert bind(UNBOUNDED).solve("highs").status == "unbounded"


def test_a_ray_along_which_the_objective_curves_is_refused():
    """A strictly convex QP has no ray: d with dᵀPd > 0 (here P = I) or one leaving a row's
    side is no certificate, whatever a solver's tolerance said."""
    form = bind(SMALL).linear_form()
    assert not clarabel_qp.proves_unbounded(form, None, np.array([1.0, 1.0]))
    form = bind(UNBOUNDED).linear_form()
    assert clarabel_qp.proves_unbounded(form, None, np.array([0.0, 1.0]))
    assert not clarabel_qp.proves_unbounded(form, None, np.array([0.0, -1.0]))  # cᵀd > 0


def test_seed_5031414_iteration_limit_is_an_error_not_a_feasible_near_minus_1e36():
    """benchmarks/fuzz.py seed 5031414: the spec's qp with q[6] = −9.3e18 (strictly convex,
    λmin(P) = 0.053: bounded). HiGHS stopped at its QP iteration limit and every backend
    reported `feasible` near −1e36; Clarabel says `DualInfeasible` with a ray no PSD P can
    have (dᵀPd = 5.6‖d‖²). Now: an `error` that says so (no backend has the optimum)."""
    spec = spec_dir()
    data = json.loads((spec / "qp.json").read_text())
    data["q"][6] = -9.307637759906451e18
    for backend, limit in (("highs", None), ("pyomo", None), ("cvxpy", None), ("cvxpy", 600)):
        sol = bind((spec / "qp.opt").read_text(), data).solve(backend, time_limit=limit)
        assert sol.status == "error", backend  # (CVXPY tells the limits apart: 600 s)
        assert sol.objective is None and sol.extra.get("warning"), backend
    assert "iteration limit" in sol.message or "user_limit" in sol.message
