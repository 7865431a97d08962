"""The FlexQP backend through `dfl solve --backend flexqp`: the spec's QPs match the reference,
the infeasible QP is `relaxed` with its least total L1 violation, float32 and errors."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
import torch
from _helpers import expected, spec_dir
from typer.testing import CliRunner

import dfl_dsl as dfl
from dfl_dsl.backends.common import RawResult
from dfl_dsl.backends.flexqp.backend import _verified
from dfl_dsl.backends.flexqp.forms import DenseForm
from dfl_dsl.cli import app
from dfl_dsl.compile.bridges import build_linear


@pytest.mark.parametrize("name", ["qp", "simplex_lsq"])
def test_spec_qps_match_the_reference_through_the_cli(name):
    spec = spec_dir()
    want = expected()[name]
    result = CliRunner().invoke(app, ["solve", str(spec / f"{name}.opt"), "--data",
                                      str(spec / f"{name}.json"), "--backend", "flexqp",
                                      "--json"])
    assert result.exit_code == 0, result.output
    got = json.loads(result.stdout)
    assert got["status"] == want["status"] and got["backend"] == "flexqp"
    assert got["objective"] == pytest.approx(want["objective"], rel=want["tol"])


def test_infeasible_qp_is_relaxed_with_the_least_l1_violation(tmp_path):
    spec = spec_dir()
    want = expected()["qp_infeasible"]["min_l1_violation"]
    out = tmp_path / "sol.json"
    result = CliRunner().invoke(app, ["solve", str(spec / "qp.opt"), "--data",
                                      str(spec / "qp_infeasible.json"), "--backend", "flexqp",
                                      "--json", "--output", str(out)])
    assert result.exit_code == 0, result.output  # relaxed is an answer: exit 0
    got = json.loads(result.stdout)
    assert got["status"] == "relaxed"
    assert sum(got["violations"].values()) == pytest.approx(want, abs=1e-5)
    assert got["total_violation"] == pytest.approx(want, abs=1e-5)
    # the two contradicting rows (x[0] <= -1 and x[0] >= 1) are the violated ones
    assert set(got["violations"]) == {"inequalities[30]", "inequalities[31]"}
    assert json.loads(out.read_text())["status"] == "relaxed"


def test_float32_and_the_fixed_policy_solve_the_spec_qp():
    spec = spec_dir()
    inst = dfl.load(spec / "qp.opt").bind(spec / "qp.json")
    want = expected()["qp"]["objective"]
    sol32 = inst.solve("flexqp", dtype="float32", eps=1e-3)  # float32: 1e-4 can stall
    assert sol32.status == "optimal"
    assert sol32.objective == pytest.approx(want, rel=1e-3)
    fixed = inst.solve("flexqp", policy="fixed", eps=1e-7)
    assert fixed.objective == pytest.approx(want, rel=1e-5)


def test_float32_defaults_to_a_tolerance_it_can_reach():
    # at float64's 1e-9 this ran its 50,000 iterations (~80 s) and ended `feasible`
    sol = dfl.parse("var x >= 0; var y >= 0; minimize f: x + 2*y; s.t. e: x + y == 1;").bind(
        {}).solve("flexqp", dtype="float32")
    assert sol.status == "optimal" and sol.extra["iterations"] < 1000
    assert sol.objective == pytest.approx(1.0, rel=1e-5)


def test_violated_bounds_are_named_by_variable():
    text = """var x >= 2; var y; minimize f: (x - 1)^2 + y^2; s.t. cap: x + y <= 0;
              s.t. lowy: y >= 1;"""
    sol = dfl.parse(text, "m.opt").bind({}).solve("flexqp")
    assert sol.status == "relaxed"
    assert sol.extra["total_violation"] == pytest.approx(3.0, abs=1e-5)  # x=2, y=1: cap by 3


def test_an_unbounded_model_is_unbounded_through_the_cli(tmp_path):
    """OSQP's certificate ends the diverging iterations early (it ran to the iteration cap and
    said `feasible`); no point, exit 1, as the highs and cvxpy backends report it."""
    model = tmp_path / "unb.opt"
    model.write_text("var x >= 0; var y; maximize f: x + y; subject to c: x - y <= 3;")
    result = CliRunner().invoke(app, ["solve", str(model), "--backend", "flexqp", "--json"])
    assert result.exit_code == 1, result.output
    got = json.loads(result.stdout)
    assert got["status"] == "unbounded" and got["objective"] is None and got["variables"] == {}
    assert got["iterations"] <= 60


def test_an_infeasible_model_unbounded_on_its_least_violating_points_is_unbounded():
    # x <= -1 and x >= 1 can't both hold, and y falls freely whatever x: no `relaxed` answer
    text = "var x; var y; minimize f: -y; s.t. lo: x >= 1; s.t. hi: x <= -1;"
    sol = dfl.parse(text, "m.opt").bind({}).solve("flexqp")
    assert sol.status == "unbounded" and sol.x is None


TRANSPORT = """set ORIG; set DEST; param supply{ORIG}; param demand{DEST}; param cost{ORIG, DEST};
var ship{ORIG, DEST} >= 0;
minimize total_cost: 3 + sum{i in ORIG, j in DEST} cost[i, j] * ship[i, j];
subject to supply_limit{i in ORIG}: sum{j in DEST} ship[i, j] <= supply[i];
subject to meet_demand{j in DEST}: sum{i in ORIG} ship[i, j] >= demand[j];
"""


def test_empty_sets_leave_the_empty_point_at_the_objective_constant(tmp_path):
    """No variables: the empty point is the solution, at the objective's constant (as highs
    reports it); a row whose constant bounds exclude 0 is the violation of that point."""
    model = tmp_path / "transp.opt"
    model.write_text(TRANSPORT)
    empty = {"ORIG": [], "DEST": ["a"], "supply": [], "cost": []}
    for demand, status, violations in ((0, "optimal", None), (1, "relaxed", {"meet_demand[a]": 1})):
        data = tmp_path / "data.json"
        data.write_text(json.dumps({**empty, "demand": [demand]}))
        result = CliRunner().invoke(app, ["solve", str(model), "--data", str(data),
                                          "--backend", "flexqp", "--json"])
        assert result.exit_code == 0, result.output
        got = json.loads(result.stdout)
        assert got["status"] == status and got["objective"] == 3.0
        assert got["variables"] == {"ship": {}} and got.get("violations") == violations
    inst = dfl.parse(TRANSPORT, "m.opt").bind({**empty, "demand": [0]})
    assert inst.solve("flexqp").duals["meet_demand"].tolist() == [0.0]


def test_integer_models_are_refused():
    from dfl_dsl.errors import DflError

    text = "var x integer >= 0; var y >= 0; minimize f: x^2 + y; s.t. c: x + y >= 1.5;"
    inst = dfl.parse(text, "m.opt").bind({})
    with pytest.raises(DflError):
        inst.solve("flexqp")


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the message shown without a GPU")
def test_asking_for_cuda_without_a_gpu_is_a_user_error():
    from dfl_dsl.errors import DflError

    spec = spec_dir()
    inst = dfl.load(spec / "qp.opt").bind(spec / "qp.json")
    with pytest.raises(DflError, match="CUDA"):
        inst.solve("flexqp", device="cuda")


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_the_spec_qp_on_cuda():
    spec = spec_dir()
    sol = dfl.load(spec / "qp.opt").bind(spec / "qp.json").solve("flexqp", device="cuda")
    assert sol.status == "optimal"
    assert sol.objective == pytest.approx(expected()["qp"]["objective"], rel=1e-5)


@pytest.mark.parametrize("sense", ["minimize", "maximize"])
def test_duals_follow_highs_convention(sense):
    """A dual is the objective's rate of change in the row's bound, as HiGHS reports it (OSQP's
    own multiplier has the other sign): an active `<=` row of a minimization has a dual <= 0."""
    sign = 1 if sense == "minimize" else -1
    text = (f"var x >= 0; var y >= 0;\n{sense} f: {sign} * ((x - 3)^2 + (y - 2)^2);\n"
            "subject to cap: 2*x + 2*y <= 6;\nsubject to eq: x - y == 0.2;\n")
    inst = dfl.parse(text, "m.opt").bind(None)
    ours, reference = inst.solve("flexqp").duals, inst.solve("highs").duals
    for row in ("cap", "eq"):
        assert ours[row][0] == pytest.approx(reference[row][0], abs=1e-5)
    assert ours["cap"][0] == pytest.approx(-sign * 1.0, abs=1e-5)  # d(obj)/d(6)


@pytest.mark.parametrize("data", ["qp", "qp_infeasible"])
def test_a_time_limit_short_of_feasibility_is_time_limit_with_the_iterations_run(data):
    # it said `feasible` with a point breaking rows by up to 10 (objective -12.37 against the
    # true -0.883), "50000 iterations", on both QPs (the second one is infeasible)
    spec = spec_dir()
    result = CliRunner().invoke(app, ["solve", str(spec / "qp.opt"), "--data",
                                      str(spec / f"{data}.json"), "--backend", "flexqp",
                                      "--time-limit", "1e-9", "--json"])
    assert result.exit_code == 1, result.output
    got = json.loads(result.stdout)
    assert got["status"] == "time_limit" and got["objective"] is None
    assert got["max_violation"] > 1e-3  # the point is kept, with what it breaks
    assert got["iterations"] < 50_000
    assert got["message"] == f"FlexQP ADMM, {got['iterations']} iteration" + (
        "" if got["iterations"] == 1 else "s")


def test_a_limit_stopped_point_that_meets_the_rows_is_feasible():
    inst = dfl.parse("var x[2] >= 0; minimize f: sum_squares(x - 3); "
                     "subject to c: x[0] + x[1] <= 100;").bind({})
    sol = inst.solve("flexqp", max_iter=2)  # stops early, far inside the constraints
    assert sol.status == "feasible" and sol.extra["iterations"] == 2


@pytest.mark.parametrize(("dtype", "cap"), [("float64", "1.34078e+154"),
                                            ("float32", "1.84467e+19")])
def test_numbers_whose_square_overflows_are_a_located_error(tmp_path, dtype, cap):
    """P[0, 0] = 1e307: FlexQP's ADMM forms P + ρAᵀA and xᵀPx; in float32 the entry is inf
    and the Cholesky factorization failed (exit 3). Now exit 2 at the objective."""
    spec = spec_dir()
    data = json.loads((spec / "qp.json").read_text())
    data["P"][0][0] = 1e307
    path = tmp_path / "qp.json"
    path.write_text(json.dumps(data))
    inst = dfl.load(spec / "qp.opt").bind(path)
    with pytest.raises(dfl.DflError, match=re.escape(
            f"quadratic coefficient of 1e+307: FlexQP takes magnitudes below {cap}")) as error:
        inst.solve("flexqp", dtype=dtype)
    assert error.value.pos is not None  # (the objective's line and column)
    result = CliRunner().invoke(app, ["solve", str(spec / "qp.opt"), "--data", str(path),
                                      "--backend", "flexqp"])
    assert result.exit_code == 2 and "FlexQP takes magnitudes below" in result.output


def test_an_optimal_that_fails_the_kkt_check_is_not_called_optimal():
    """A hand-made wrong answer (a vertex, where the optimum is (¾, ¾)) given to the check
    FlexQP's `optimal` goes through: `feasible`, no duals, and why; the optimum passes."""
    inst = dfl.parse("var x{0..1} >= 0; minimize f: 0.5 * (x[0]^2 + x[1]^2) - 1.5 * x[0] "
                     "- 1.5 * x[1]; s.t. total: x[0] + x[1] <= 1.5;", "m.opt").bind({})
    form = build_linear(inst, reduce=False)
    dense = DenseForm(form)
    rows = form.m + len(dense.bound_cols)
    wrong = RawResult("optimal", np.array([1.0, 0.0]), -1.0, np.zeros(form.m))
    told = _verified(form, dense, None, wrong, np.zeros(rows), 1e-9)
    assert (told.status, told.objective, told.row_duals) == ("feasible", -1.0, None)
    assert told.warning.startswith("not proven optimal: FlexQP's `optimal` fails the KKT")
    right = RawResult("optimal", np.array([0.75, 0.75]), -1.6875, np.full(form.m, -0.75))
    duals = np.concatenate([right.row_duals, np.zeros(rows - form.m)])
    assert _verified(form, dense, None, right, duals, 1e-9) is right
