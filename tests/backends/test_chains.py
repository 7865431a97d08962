"""The chain search: the fewest reductions that take a model's form to a form a backend
takes, and the backends a model goes to, best first for its class."""

from __future__ import annotations

import pytest

import dfl_dsl as dfl
from dfl_dsl.backends import accepting
from dfl_dsl.backends.chains import plan
from dfl_dsl.backends.declarations import BY_NAME
from dfl_dsl.forms import Form


def test_the_fewest_steps_to_each_backend():
    form = Form("piecewise", "piecewise", frozenset({"risk", "scenarios"}))
    assert plan(form, BY_NAME["highs"]) == ("risk measures", "scenario split", "epigraphs")
    assert plan(form, BY_NAME["cvxpy"]) == ("risk measures", "scenario split")
    assert plan(Form("linear"), BY_NAME["highs"]) == ()
    assert plan(Form("conic"), BY_NAME["highs"]) is None
    assert plan(Form("lowerable"), BY_NAME["flexqp"]) == ("epigraphs",)


@pytest.mark.parametrize(("text", "backends"), [
    ("var x >= 0; minimize o: x;", ["highs", "pyomo", "cvxpy", "flexqp"]),
    ("var x binary; minimize o: x;", ["highs", "pyomo", "cvxpy"]),
    ("var x; minimize o: abs(x - 1);", ["highs", "pyomo", "cvxpy", "flexqp"]),
    ("var x; minimize o: x^2;", ["highs", "cvxpy", "pyomo", "flexqp"]),
    ("var x in [0, 1]; minimize o: x^2;", ["highs", "cvxpy", "pyomo", "flexqp", "fw"]),
    ("var x in [0, 1]; minimize o: x^2 + abs(x - 1);", ["highs", "cvxpy", "pyomo", "flexqp"]),
    ("var x{1..3} >= -1 <= 1; minimize o: sum{i in 1..3} (x[i] - 2)^2;\n"
     "subject to ball: norm1(x) <= 1;", ["highs", "cvxpy", "pyomo", "flexqp", "fw"]),
    ("var x binary; minimize o: x^2;", []),  # MIQP
    ("var x; minimize o: norm2(x - 1);", ["cvxpy"]),
    ("var x; minimize o: huber(x - 1);", ["highs", "cvxpy", "pyomo", "flexqp"]),
    ("var X[3, 2] in stiefel; minimize o: sum_squares(X);", ["obcd"]),
    ("var x{1..3} binary; maximize o: sqrt(sum{i in 1..3} x[i]);", ["aapga"]),
    ("param c : uncertain; var x >= 0 <= 1; minimize o: cvar(0.5, c * x);",
     ["highs", "pyomo", "cvxpy", "flexqp"]),
])
def test_the_backends_a_model_goes_to(text, backends):
    assert accepting(dfl.parse(text).klass) == backends


def test_frank_wolfe_solves_a_norm_ball_from_its_declared_pairs():
    inst = dfl.parse("var x{1..3} >= -1 <= 1; minimize o: sum{i in 1..3} (x[i] - 2)^2;\n"
                     "subject to ball: norm1(x) <= 1;").bind({})
    assert len(inst.linear_form().l1_pairs) == 1
    assert inst.solve("fw").objective == pytest.approx(inst.solve("highs").objective, abs=1e-6)
