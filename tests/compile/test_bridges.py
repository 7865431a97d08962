"""The chains a backend gets: the steps planned from the model's form are the steps that run
on the bound model (each planned step accepts it), and the standard form's chain lowers every
atom."""

from __future__ import annotations

import pytest
from _helpers import bind

from dfl_dsl.compile.bridges import build_linear, for_backend, reduce_model

MODELS = {
    "abs": ("var x; minimize o: abs(x - 1); subject to c: x <= 3;", {}),
    "cvar": ("set I; param c{I} : uncertain; var x{I} >= 0 <= 1;\n"
             "minimize o: cvar(0.5, sum{i in I} c[i] * x[i]) + abs(x[1] - 0.5);\n"
             "subject to k: sum{i in I} x[i] >= 1;",
             {"I": [1, 2], "c": [[1, 2], [3, 0], [0, 1]]}),
    "uncertain row": ("param d : uncertain; var x; minimize o: x; subject to c: x >= d;",
                      {"d": [1, 2]}),
}


@pytest.mark.parametrize("name", sorted(MODELS))
@pytest.mark.parametrize("backend", ["highs", "cvxpy"])
def test_the_planned_steps_run(name, backend):
    inst = bind(*MODELS[name])
    steps = for_backend(inst, backend)
    _, applied = reduce_model(inst.compile(), inst, steps)
    ran = [step.name for step, _ in applied.steps]
    assert ran == [s.name for s in steps[1:]]  # (symbolic bounds: none in these models)


def test_the_standard_form_lowers_every_atom():
    form = build_linear(bind(*MODELS["cvar"]), reduce=False)
    assert [step.name for step, _ in form.applied.steps] == [
        "risk measures", "scenario split", "epigraphs"]
    assert form.P is None and form.m == 1 + 3 + 2  # k, cvar's rows, |x1 - 0.5|'s
