"""A few AMPL models through the real command line (`dfl solve MODEL.mod --data MODEL.dat
--json`): the objective against the Pyomo reference, duals keyed by set elements, a named
objective picked with --objective, a model file carrying its own data after `data;`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from _ampl import BROKEN, dat, marks, mod, numbers, reference

ROOT = Path(__file__).resolve().parents[2]
MAIN = "import sys; from dfl_dsl.cli import main; sys.exit(main())"  # the console script


def dfl(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    return subprocess.run([sys.executable, "-c", MAIN, *args], capture_output=True, text=True,
                          env=env, cwd=ROOT, timeout=300)


def solve_json(name: str, *extra: str) -> dict:
    data = dat(name)
    args = ["solve", str(mod(name)), *(["--data", str(data)] if data else []), "--json", *extra]
    run = dfl(*args)
    assert run.returncode == 0, run.stderr
    assert "Traceback" not in run.stderr
    return json.loads(run.stdout)


@pytest.mark.parametrize(("name", "backend"), [
    pytest.param(name, backend, marks=marks(name), id=f"{name}-{backend}")
    for name, backend in [("steel", "highs"), ("cutstock", "auto"), ("lasso", "highs"),
                          ("lasso", "pyomo")]])
def test_cli_objective_matches_the_reference(name, backend):
    out = solve_json(name, "--backend", backend)
    assert out["status"] == "optimal"
    assert out["objective"] == pytest.approx(reference(name).reference(numbers(name)), rel=1e-6)


@pytest.mark.parametrize("name", [pytest.param("transport", marks=marks("transport"))])
def test_duals_are_keyed_by_set_elements(name):
    out = solve_json(name)
    want, duals = reference(name).duals(numbers(name))
    assert out["objective"] == pytest.approx(want, rel=1e-9)
    for row, prices in duals.items():
        assert set(out["duals"][row]) == set(prices)
        for element, price in prices.items():
            assert out["duals"][row][element] == pytest.approx(price, abs=1e-7), (row, element)


@pytest.mark.parametrize("name", [pytest.param("steel", marks=marks("steel"))])
def test_duals_over_two_indices_nest_by_element(name):
    out = solve_json(name)
    d = numbers(name)
    balance = out["duals"]["Balance"]     # Balance {p in PROD, t in 1..T}
    assert list(balance) == d["PROD"]
    for p in d["PROD"]:
        assert list(balance[p]) == [str(t) for t in range(1, d["T"] + 1)]
    assert list(out["duals"]["Init_Inv"]) == d["PROD"]


@pytest.mark.parametrize("objective", [pytest.param(o, marks=marks("multiobjective"))
                                       for o in ["Total_Profit", "Overtime", "Leftover"]])
def test_objective_option_picks_a_named_objective(objective):
    out = solve_json("multiobjective", "--objective", objective)
    want = reference("multiobjective").reference(numbers("multiobjective"), objective)
    assert out["objective"] == pytest.approx(want, rel=1e-6, abs=1e-9)


@pytest.mark.parametrize("name", [pytest.param("datainmod", marks=marks("datainmod"))])
def test_a_model_file_carries_its_data_after_data(name):
    assert dat(name) is None
    out = solve_json(name)
    assert out["objective"] == pytest.approx(reference(name).reference(numbers(name)), rel=1e-6)


@pytest.mark.parametrize("name", [pytest.param("transport", marks=marks("transport"))])
def test_a_broken_dat_from_the_console_script(name):
    data = BROKEN / "table_width.dat"
    run = dfl("solve", str(mod(name)), "--data", str(data), "--json")
    assert run.returncode == 2 and run.stdout == ""
    assert run.stderr.startswith(f"{data}:7:4: error: param `cost`: row CLEV has 6 values")
    assert "Traceback" not in run.stderr
