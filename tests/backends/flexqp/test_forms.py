"""DenseForm: the compiled model as FlexQP's box-form batch."""

from __future__ import annotations

import pytest

import dfl_dsl as dfl


def test_a_model_without_rows_or_bounds_solves():
    # unconstrained least squares: the box form gets one vacuous row (ADMM reduces over rows)
    text = "var x; var y; minimize f: (x - 1)^2 + (y + 2)^2 + 3;"
    sol = dfl.parse(text, "m.opt").bind({}).solve("flexqp")
    assert sol.status == "optimal"
    assert sol.objective == pytest.approx(3.0, abs=1e-8)
    assert sol.value("x") == pytest.approx(1.0, abs=1e-6)
    assert sol.value("y") == pytest.approx(-2.0, abs=1e-6)
