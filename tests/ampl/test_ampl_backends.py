"""Slow: every backend that accepts an AMPL model's class (HiGHS, Pyomo, CVXPY, FlexQP, FW, ...)
reaches the Pyomo reference's optimum. The fast suite solves with the default backend only."""

from __future__ import annotations

import pytest
from _ampl import marks, mod, names, numbers, reference
from test_ampl_models import solve_dfl

import dfl_dsl as dfl
from dfl_dsl.backends import accepting

pytestmark = pytest.mark.slow


def _cases():
    return [pytest.param(name, objective, marks=marks(name), id=f"{name}-{objective or 'first'}")
            for name in names() for objective in reference(name).OBJECTIVES]


@pytest.mark.parametrize(("name", "objective"), _cases())
def test_every_accepting_backend_reaches_the_reference(name, objective):
    want = reference(name).reference(numbers(name), objective)
    options = {} if objective is None else {"objective": objective}
    backends = accepting(dfl.load(mod(name), **options).klass)
    assert "highs" in backends or "cvxpy" in backends, backends
    for backend in backends:
        sol = solve_dfl(name, objective, backend)
        assert sol.objective == pytest.approx(want, rel=1e-6, abs=1e-6), backend  # ADMM: 1e-9 at 0
