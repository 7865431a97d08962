"""`dfl generate` and `dfl train` for a model with `uncertain` params, end to end through the CLI
with one epoch: each loss prints the relative CVaR regret at the model's α."""

from __future__ import annotations

import json

import numpy as np
import pytest
from _learn_helpers import EXAMPLES
from typer.testing import CliRunner

from dfl_dsl.cli import app
from dfl_dsl.generators.portfolio_cvar import portfolio_cvar

runner = CliRunner()
MODEL = str(EXAMPLES / "portfolio_cvar" / "portfolio_cvar.opt")


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """A small portfolio data set (5 assets, 8 true scenarios per sample) and its instance."""
    root = tmp_path_factory.mktemp("gen")
    paths = {"train": root / "F.npz", "instance": root / "I.json"}
    data = portfolio_cvar(num_data=30, num_assets=5, draws=8, seed=3)
    np.savez(paths["train"], **data.arrays())
    paths["instance"].write_text(json.dumps(data.instance))
    return paths


def test_generate_writes_draws_per_sample(tmp_path):
    out, instance = tmp_path / "F.npz", tmp_path / "I.json"
    result = runner.invoke(app, ["generate", "portfolio_cvar", "--out", str(out), "--instance",
                                 str(instance), "--num-data", "4", "--assets", "3", "--deg", "4",
                                 "--noise", "1"])
    assert result.exit_code == 0, result.output
    assert np.load(out)["ret"].shape == (4, 64, 3)
    assert json.loads(instance.read_text()) == {"n": 3, "alpha": 0.9}


@pytest.mark.parametrize("loss", ["gen-dfl", "nll", "mse", "spo+"])
def test_train_one_epoch_prints_the_cvar_regret(files, loss):
    result = runner.invoke(app, [
        "train", MODEL, "--data", str(files["instance"]), "--train", str(files["train"]),
        "--test", str(files["train"]), "--loss", loss, "--epochs", "1", "--batch-size", "15",
        "--lr", "1e-3", "--json"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["metric"] == "relative CVaR regret" and out["alpha"] == 0.9
    assert out["true_scenarios"] == 8 and out["regret"] >= 0 and len(out["history"]) == 1
    assert out["scenarios"] == (1 if loss in ("mse", "spo+") else 16)
    assert "relative CVaR regret at α = 0.9" in result.stderr.replace("\n", " ")


def test_scenario_losses_need_uncertain_params():
    sp = str(EXAMPLES / "shortest_path" / "shortest_path.opt")
    result = runner.invoke(app, ["train", sp, "--loss",
                                 "gen-dfl", "--epochs", "1"])
    assert result.exit_code == 2
    assert "uncertain" in result.output and "Traceback" not in result.output


def test_unknown_scenario_loss(files):
    result = runner.invoke(app, ["train", MODEL, "--data", str(files["instance"]), "--train",
                                 str(files["train"]), "--loss", "pfyl", "--epochs", "1"])
    assert result.exit_code == 2 and "gen-dfl" in result.output


def test_save_and_eval_are_refused_for_uncertain_params(files, tmp_path):
    args = ["--data", str(files["instance"]), "--train", str(files["train"])]
    result = runner.invoke(app, ["train", MODEL, *args, "--loss", "nll", "--epochs", "1",
                                 "--save", str(tmp_path / "c.pt")])
    assert result.exit_code == 2 and "not supported" in result.output
    result = runner.invoke(app, ["eval", MODEL, "--data", str(files["instance"]),
                                 "--checkpoint", str(tmp_path / "c.pt"), "--test",
                                 str(files["train"])])
    assert result.exit_code == 2 and "uncertain" in result.output
    assert not (tmp_path / "c.pt").exists()
