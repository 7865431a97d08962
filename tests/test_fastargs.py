"""The argparse reading of `dfl` command lines gives typer's own parameters, or defers."""

from __future__ import annotations

import subprocess
import sys

import pytest
from _helpers import spec_dir
from typer.main import get_command

from dfl_dsl.cli import app, main
from dfl_dsl.fastargs import fast_call

LINES = [
    ["check", "m.opt"],
    ["check", "m.opt", "--data", "d.json"],
    ["check", "--data=d.json", "m.opt"],
    ["solve", "m.opt", "-d", "d.json", "--json", "--nonzeros", "-o", "sol.npz"],
    ["solve", "m.opt", "-b", "highs", "--time-limit", "2.5", "--seed", "-1", "--device", "cpu",
     "--variant", "vanilla", "--write", "m.lp"],
    ["train", "m.opt", "--epochs", "3", "--loss", "pfyl", "--cautious-wd", "--json",
     "--hidden", "8", "--lr", "1e-3"],
    ["train", "m.opt", "--loss", "dpo", "--samples", "3", "--sigma", "0.5"],
    ["train", "m.opt", "--loss", "dbb", "--lambda", "20", "--solve-ratio", "0.05"],
    ["train", "m.opt", "--loss", "aimle", "--two-sides", "--kappa", "3", "--task-loss", "mse"],
    ["train", "m.opt", "--loss", "cave", "--max-iter", "5", "--inner-ratio", "0.3"],
    ["train", "m.opt", "--loss", "dpo", "--no-variance-reduction", "--task-loss", "l1"],
    ["eval", "m.opt", "--checkpoint", "c.pt", "--test", "t.npz"],
    ["generate", "knapsack", "--out", "k.npz", "--num-data", "10"],
    ["train-solver", "--save", "p.pt", "--steps", "2"],
]


@pytest.mark.parametrize("argv", LINES, ids=" ".join)
def test_same_parameters_as_typer(argv):
    command = get_command(app).commands[argv[0]]
    expected = command.make_context(argv[0], argv[1:]).params
    function, kwargs = fast_call(app, argv)
    assert kwargs == expected and function.__name__.replace("_", "-") in (argv[0], "evaluate")


@pytest.mark.parametrize("argv", [
    [], ["--help"], ["solve", "--help"], ["nope", "m.opt"], ["solve"],
    ["solve", "m.opt", "--bogus"], ["solve", "m.opt", "--seed", "x"], ["solve", "m.opt", "-d"],
    ["eval", "m.opt"],  # --checkpoint is required
    ["solve", "m.opt", "--sol", "x"],  # no abbreviations (click has none)
])
def test_what_needs_typer_is_left_to_typer(argv):
    assert fast_call(app, argv) is None


def test_main_runs_the_command_and_returns_its_exit_status(tmp_path, capsys):
    model = tmp_path / "m.opt"
    model.write_text("var x >= 0; minimize f: x; subject to c: x <= -1;")
    assert main(["solve", str(model), "--json"]) == 1
    assert '"status": "infeasible"' in capsys.readouterr().out
    model.write_text("var x >= 0; minimize f: x")
    assert main(["check", str(model)]) == 2


def test_python_dash_m_and_typer_errors(tmp_path):
    run = subprocess.run([sys.executable, "-m", "dfl_dsl", "solve", "m.opt", "--bogus"],
                         capture_output=True, text=True)
    assert run.returncode == 2 and "No such option" in run.stderr


@pytest.mark.parametrize("args", [
    ["check", "{spec}/transport.opt"],
    ["solve", "{spec}/transport.opt", "-d", "{spec}/transport.json"],
])
def test_a_reader_that_goes_away_is_success_here_too(args):
    """`dfl ARGS | head -1` through the argparse path (what the `dfl` script runs)."""
    spec = spec_dir()
    run = subprocess.Popen([sys.executable, "-m", "dfl_dsl", *[a.format(spec=spec)
                                                                for a in args]],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    run.stdout.readline()
    run.stdout.close()
    assert run.wait(timeout=600) == 0 and run.stderr.read() == b""
