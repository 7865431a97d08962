"""Model forms and what the reductions make of them: the class a form lowers to."""

from __future__ import annotations

import pytest

from dfl_dsl.forms import STEPS, Form, class_name, lowered


@pytest.mark.parametrize(("form", "name"), [
    (Form("linear"), "LP"),
    (Form("piecewise", "piecewise", frozenset({"integer"})), "MILP"),
    (Form("lowerable"), "QP"),
    (Form("quadratic", traits=frozenset({"integer"})), "MIQP"),
    (Form("quadratic", "conic"), "SOCP"),
    (Form("piecewise", "conic"), "SOCP"),
    (Form("scm", traits=frozenset({"integer"})), "SCM"),
    (Form("stiefel"), "STIEFEL"),
])
def test_class_names(form, name):
    assert class_name(form) == name


def test_risk_measures_come_before_the_scenario_split_before_the_epigraphs():
    form = Form("piecewise", traits=frozenset({"risk", "scenarios"}))
    by_name = {s.name: s for s in STEPS}
    assert by_name["scenario split"].reaches(form) is None
    assert by_name["epigraphs"].reaches(form) is None
    assert lowered(form) == Form("linear")
