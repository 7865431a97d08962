"""The acceptance suite (../shared/spec): every model with a reference objective, solved by every
registered backend that accepts its class."""

from __future__ import annotations

import pytest
from _helpers import SPEC, expected, spec_dir
from typer.testing import CliRunner

import dfl_dsl as dfl
from dfl_dsl.backends import accepting
from dfl_dsl.cli import app


def _cases():
    if not (SPEC / "expected.json").is_file():
        return [pytest.param("missing", "none", marks=pytest.mark.skip("no shared/spec"))]
    cases = []
    for name, want in expected().items():
        if "objective" not in want or not (SPEC / f"{name}.opt").is_file():
            continue
        for backend in accepting(dfl.load(SPEC / f"{name}.opt").klass):
            cases.append(pytest.param(name, backend, id=f"{name}-{backend}"))
    return cases


@pytest.mark.parametrize(("name", "backend"), _cases())
def test_reference_objective(name, backend):
    spec = spec_dir()
    want = expected()[name]
    sol = dfl.load(spec / f"{name}.opt").bind(spec / f"{name}.json").solve(backend)
    assert sol.status == want["status"]
    assert sol.objective == pytest.approx(want["objective"], rel=want.get("tol", 1e-6))


def test_every_model_with_a_reference_objective_has_a_backend():
    for name, want in expected().items():
        if "objective" in want:
            assert accepting(dfl.load(spec_dir() / f"{name}.opt").klass), name


@pytest.mark.parametrize("backend", ["highs", "cvxpy"])
def test_infeasible_qp(backend):
    spec = spec_dir()
    assert expected()["qp_infeasible"]["status"] == "infeasible"
    sol = dfl.load(spec / "qp.opt").bind(spec / "qp_infeasible.json").solve(backend)
    assert sol.status == "infeasible" and sol.x is None and sol.objective is None


@pytest.mark.parametrize("backend", ["auto", "highs", "cvxpy"])
def test_infeasible_qp_exits_1(backend, tmp_path):
    spec = spec_dir()
    out = tmp_path / "sol.json"
    result = CliRunner().invoke(app, ["solve", str(spec / "qp.opt"), "--data",
                                      str(spec / "qp_infeasible.json"), "--backend", backend,
                                      "--output", str(out)])
    assert result.exit_code == 1, result.output
    assert "infeasible" in result.output and "Traceback" not in result.output
    assert not out.exists()
