"""Backend declarations: what each backend states it takes is what its solver accepts — the
options its solve function has, and the CLI's help built from them."""

from __future__ import annotations

import inspect

import pytest

from dfl_dsl.backends import load_backend
from dfl_dsl.backends.declarations import BACKENDS, BY_NAME, backend_help, option_help
from dfl_dsl.forms import Form


def _keywords(fn) -> set[str]:
    params = inspect.signature(fn).parameters.values()
    return {p.name for p in params if p.kind is p.KEYWORD_ONLY} - {"time_limit", "seed"}


@pytest.mark.parametrize("backend", BACKENDS, ids=lambda b: b.name)
def test_declared_options_are_the_solvers(backend):
    module = load_backend(backend.name)
    takes = _keywords(module.solve_instance)
    if backend.name == "obcd":  # it forwards its options to the solver itself
        takes |= _keywords(module.obcd)
    assert set(backend.option_names) == takes


def test_the_cli_help_comes_from_the_declarations():
    assert backend_help() == ("auto | highs | pyomo | cvxpy | flexqp | obcd | fw | aapga "
                              "(auto: by class).")
    assert option_help("device") == ("cpu | cuda: where the torch backends (flexqp, obcd, "
                                     "aapga) run.")
    assert option_help("write").startswith("pyomo:")


def test_takes_reads_objective_rows_and_traits():
    highs, cvxpy, fw = BY_NAME["highs"], BY_NAME["cvxpy"], BY_NAME["fw"]
    assert highs.takes(Form("linear", "linear", frozenset({"integer"})))
    assert not highs.takes(Form("quadratic", "linear", frozenset({"integer"})))  # MIQP
    assert not highs.takes(Form("piecewise"))  # its epigraphs first
    assert cvxpy.takes(Form("piecewise", "conic"))
    assert not cvxpy.takes(Form("linear", traits=frozenset({"scenarios"})))
    assert fw.takes(Form("quadratic", traits=frozenset({"bounded"})))
    assert not fw.takes(Form("quadratic"))
