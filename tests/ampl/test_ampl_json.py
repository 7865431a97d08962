"""The same AMPL models with their data as JSON: converted from the .dat by `dfl data --to json`
they bind the same arrays, so the objective is identical; the hand-written JSON copy (the
numbers the references read) gives the same optimum too."""

from __future__ import annotations

import json

import pytest
from _ampl import MODELS, dat, marks, mod, names
from test_ampl_models import solve_dfl
from typer.testing import CliRunner

import dfl_dsl as dfl
from dfl_dsl.cli import app


def _cases():
    return [pytest.param(name, marks=marks(name), id=name) for name in names()]


@pytest.mark.parametrize("name", _cases())
def test_converted_json_gives_the_identical_objective(name, tmp_path):
    source = dat(name) or mod(name)    # a model file with a `data;` part converts too
    out = tmp_path / f"{name}.json"
    result = CliRunner().invoke(app, ["data", str(source), "--to", "json", "--model",
                                      str(mod(name)), "--out", str(out)])
    assert result.exit_code == 0, result.output
    converted = json.loads(out.read_text())
    assert converted, "the conversion wrote no data"
    from_dat = solve_dfl(name)
    from_json = dfl.load(mod(name)).bind(out).solve()
    assert from_json.status == from_dat.status == "optimal"
    assert from_json.objective == from_dat.objective


@pytest.mark.parametrize("name", _cases())
def test_hand_written_json_gives_the_same_optimum(name):
    from_dat = solve_dfl(name)
    from_json = dfl.load(mod(name)).bind(MODELS / name / f"{name}.json").solve()
    assert from_json.objective == pytest.approx(from_dat.objective, rel=1e-9, abs=1e-12)
