"""`dfl generate` and `dfl train` for a model with `uncertain` params, end to end through the CLI
with one epoch: each loss prints the relative CVaR regret at the model's α."""

from __future__ import annotations

import json

import pytest
from _learn_helpers import EXAMPLES
from typer.testing import CliRunner

from dfl_dsl.cli import app

runner = CliRunner()
MODEL = str(EXAMPLES / "portfolio_cvar.opt")


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    root = tmp_path_factory.mktemp("gen")
    paths = {"train": root / "F.npz", "instance": root / "I.json"}
    result = runner.invoke(app, ["generate", "portfolio_cvar", "--out", str(paths["train"]),
                                 "--instance", str(paths["instance"]), "--num-data", "40",
                                 "--assets", "6", "--deg", "4", "--noise", "1"])
    assert result.exit_code == 0, result.output
    return paths


@pytest.mark.parametrize("loss", ["gen-dfl", "nll", "mse", "spo+"])
def test_train_one_epoch_prints_the_cvar_regret(files, loss):
    result = runner.invoke(app, [
        "train", MODEL, "--data", str(files["instance"]), "--train", str(files["train"]),
        "--test", str(files["train"]), "--loss", loss, "--epochs", "1", "--batch-size", "20",
        "--lr", "1e-3", "--json"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["metric"] == "relative CVaR regret" and out["alpha"] == 0.9
    assert out["true_scenarios"] == 64 and out["regret"] >= 0 and len(out["history"]) == 1
    assert out["scenarios"] == (1 if loss in ("mse", "spo+") else 16)
    assert "relative CVaR regret at α = 0.9" in result.stderr.replace("\n", " ")


def test_scenario_losses_need_uncertain_params():
    result = runner.invoke(app, ["train", str(EXAMPLES / "shortest_path.opt"), "--loss",
                                 "gen-dfl", "--epochs", "1"])
    assert result.exit_code == 2
    assert "uncertain" in result.output and "Traceback" not in result.output


def test_unknown_scenario_loss(files):
    result = runner.invoke(app, ["train", MODEL, "--data", str(files["instance"]), "--train",
                                 str(files["train"]), "--loss", "pfyl", "--epochs", "1"])
    assert result.exit_code == 2 and "gen-dfl" in result.output
