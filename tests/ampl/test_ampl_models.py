"""Every AMPL model in models/ solved unchanged from its .mod + .dat through the Python API, its
objective compared with an independent Pyomo reference built from hand-copied numbers."""

from __future__ import annotations

import pytest
from _ampl import dat, marks, mod, names, numbers, reference

import dfl_dsl as dfl


def _cases():
    cases = []
    for name in names():
        ref = reference(name)
        for objective in ref.OBJECTIVES:
            cases.append(pytest.param(name, objective, marks=marks(name),
                                      id=name if objective is None else f"{name}-{objective}"))
    return cases


def solve_dfl(name: str, objective: str | None = None, backend: str = "auto"):
    model = dfl.load(mod(name))
    data = dat(name)
    inst = model.bind(data) if data is not None else model.bind(None)
    options = {} if objective is None else {"objective": objective}
    return inst.solve(backend, **options)


def test_there_are_at_least_25_models():
    assert len(names()) >= 25, names()


@pytest.mark.parametrize(("name", "objective"), _cases())
def test_objective_matches_the_reference(name, objective):
    want = reference(name).reference(numbers(name), objective)
    sol = solve_dfl(name, objective)
    assert sol.status == "optimal"
    assert sol.objective == pytest.approx(want, rel=1e-6, abs=1e-9)
