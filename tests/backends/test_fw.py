"""The Frank–Wolfe backend: closed-form LMOs recognized from the LinearForm's structure and
checked against the HiGHS LMO, every variant's certified gap, and the spec's simplex_lsq."""

from __future__ import annotations

import json

import numpy as np
import pytest
from _helpers import bind, expected, spec_dir
from typer.testing import CliRunner

from dfl_dsl.backends.fw import _LMO, VARIANTS, _without_objective, frank_wolfe
from dfl_dsl.backends.highs import HighsModel
from dfl_dsl.cli import app

HEAD = "param n : int; param x0[n];\n"
OBJ = "minimize d: sum_squares(x - x0);\n"
MODELS = {
    "simplex": ("var x[n] >= 0;" + OBJ + "subject to s: sum(x) == 1;", "blocks"),
    "simplex_le": ("var x[n] >= 0;" + OBJ + "subject to s: sum(x) <= 2;", "blocks"),
    "capped_simplex": ("var x[n] >= 0 <= 1;" + OBJ + "subject to s: sum(x) == 3;", "blocks"),
    "knapsack_range": ("var x[n] >= 0 <= 1;" + OBJ
                       + "subject to lo: sum{i in 0..n-1} (i + 1) * x[i] >= 2;"
                       + "subject to hi: sum{i in 0..n-1} (i + 1) * x[i] <= 9;", "highs"),
    "partition": ("var x[n] >= 0 <= 1;" + OBJ
                  + "subject to a: sum{i in 0..2} x[i] <= 1;"
                  + "subject to b: sum{i in 3..n-1} x[i] == 2;", "blocks"),
    "split_k_sparse": ("var p[n] >= 0 <= 1; var q[n] >= 0 <= 1;"
                       "minimize d: sum_squares(p - q - x0);"
                       "subject to k: sum(p) + sum(q) <= 2.5;", "blocks"),
    # norm balls: the L1 oracle reads the pairs |x_i| <= s_i norm1's epigraph declared
    "l1_ball": ("var x[n] >= -inf;" + OBJ + "subject to r: norm1(x) <= 1.5;", "l1"),
    "k_sparse": ("var x[n] >= -1 <= 1;" + OBJ + "subject to k: norm1(x) <= 2.5;", "l1"),
    # the same ball written out by hand: no declared structure, so HiGHS is the oracle
    "l1_rows": ("var x[n] >= -1 <= 1; var s[n] >= 0;" + OBJ
                + "subject to up{i in 0..n-1}: x[i] - s[i] <= 0;"
                + "subject to down{i in 0..n-1}: x[i] + s[i] >= 0;"
                + "subject to k: sum(s) <= 2.5;", "highs"),
    "overlapping": ("var x[n] >= 0 <= 1;" + OBJ
                    + "subject to a: x[0] + x[1] + x[2] <= 1;"
                    + "subject to b: x[2] + x[3] <= 1;", "highs"),
}


def _inst(name: str, n: int = 6):
    x0 = np.random.default_rng(len(name)).normal(0.0, 1.0, n)
    return bind(HEAD + MODELS[name][0], {"n": n, "x0": x0.tolist()})


@pytest.mark.parametrize("name", sorted(MODELS))
def test_closed_form_lmo_matches_highs(name):
    form = _inst(name).linear_form()
    lmo = _LMO(form)
    assert lmo.kind == MODELS[name][1]
    ref = HighsModel(_without_objective(form))
    rng = np.random.default_rng(0)
    A = form.A.tocsr()
    for _ in range(10):
        g = rng.normal(size=form.n)
        _, v = lmo(g)
        ref.set_objective(g, 0.0)
        w = ref.solve_fast()
        assert g @ v == pytest.approx(g @ w, abs=1e-9)
        row = A @ v
        assert np.all(row >= form.rl - 1e-9) and np.all(row <= form.ru + 1e-9)
        assert np.all(v >= form.lb - 1e-9) and np.all(v <= form.ub + 1e-9)


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("name", ["capped_simplex", "k_sparse", "overlapping"])
def test_every_variant_certifies_its_answer(variant, name):
    inst = _inst(name)
    form = inst.linear_form()
    exact = inst.solve("highs").objective
    result = frank_wolfe(form, variant=variant, tol=1e-6, max_iter=200_000)
    assert result["converged"] and result["gap"] <= 1e-6
    assert exact - 1e-9 <= result["objective"] <= exact + result["gap"] + 1e-9


def test_trace_records_a_falling_certificate():
    form = _inst("simplex").linear_form()
    trace: list = []
    frank_wolfe(form, variant="short", tol=1e-8, trace=trace)
    gaps = [gap for _, gap, _ in trace]
    assert gaps[-1] <= 1e-8 and all(b <= a + 1e-15 for a, b in zip(gaps, gaps[1:], strict=False))


def test_simplex_lsq_json_reports_the_certified_gap(tmp_path):
    spec = spec_dir()
    result = CliRunner().invoke(app, ["solve", str(spec / "simplex_lsq.opt"), "--data",
                                      str(spec / "simplex_lsq.json"), "--backend", "fw",
                                      "--json"])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.output)
    assert payload["certified_gap"] <= 1e-6 and payload["status"] == "optimal"
    assert payload["objective"] == pytest.approx(expected()["simplex_lsq"]["objective"],
                                                 rel=1e-5)
