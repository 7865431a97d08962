"""`dfl generate`, `dfl train` and `dfl eval` for a model with `uncertain` params, end to end
through the CLI with one epoch: each loss prints the relative CVaR regret at the model's α, the
generative options reach the trainer, a saved model evaluates to the very regret it trained to,
and mistakes exit 2 without a traceback or a checkpoint."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch
import typer
from _learn_helpers import EXAMPLES
from typer.testing import CliRunner

from dfl_dsl.cli import app
from dfl_dsl.generators.portfolio_cvar import portfolio_cvar
from dfl_dsl.learn import session
from dfl_dsl.learn.options import SCENARIO_DEFAULTS
from dfl_dsl.learn.scenario_trainer import ScenarioTrainer

runner = CliRunner()
MODEL = str(EXAMPLES / "portfolio_cvar" / "portfolio_cvar.opt")
SHORTEST_PATH = str(EXAMPLES / "shortest_path" / "shortest_path.opt")


def _stderr(result) -> str:
    """stderr with rich's line wrapping (at 80 columns off a terminal) undone."""
    return result.stderr.replace("\n", "")


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


def test_generate_shortest_path_scenarios(tmp_path):
    """The Gen-DFL shortest-path task: draws of all 40 arc costs per sample, the grid and α."""
    out, instance = tmp_path / "S.npz", tmp_path / "S.json"
    result = runner.invoke(app, ["generate", "shortest_path_cvar", "--out", str(out),
                                 "--instance", str(instance), "--num-data", "3", "--deg", "6",
                                 "--noise", "0.5", "--grid", "3x3"])
    assert result.exit_code == 0, result.output
    assert np.load(out)["cost"].shape == (3, 64, 12)
    written = json.loads(instance.read_text())
    assert written["alpha"] == 0.9 and written["source"] == 0 and written["sink"] == 8


@pytest.mark.parametrize("loss", ["gen-dfl", "nll", "mse", "spo+"])
def test_train_one_epoch_prints_the_cvar_regret(files, loss):
    result = runner.invoke(app, [
        "train", MODEL, "--data", str(files["instance"]), "--train", str(files["train"]),
        "--test", str(files["train"]), "--loss", loss, "--epochs", "1", "--batch-size", "15",
        "--lr", "1e-3", "--json"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["metric"] == "relative CVaR regret" and out["alpha"] == 0.9
    assert out["regret_kind"] == "normalized"
    assert out["true_scenarios"] == 8 and out["regret"] >= 0 and len(out["history"]) == 1
    assert out["scenarios"] == (1 if loss in ("mse", "spo+") else 16)
    assert "relative CVaR regret at α = 0.9" in result.stderr.replace("\n", " ")


def test_scenario_losses_need_uncertain_params():
    result = runner.invoke(app, ["train", SHORTEST_PATH, "--loss",
                                 "gen-dfl", "--epochs", "1"])
    assert result.exit_code == 2
    assert "uncertain" in result.output and "Traceback" not in result.output


def test_unknown_scenario_loss(files):
    result = runner.invoke(app, ["train", MODEL, "--data", str(files["instance"]), "--train",
                                 str(files["train"]), "--loss", "pfyl", "--epochs", "1"])
    assert result.exit_code == 2 and "gen-dfl" in result.output


@pytest.fixture(scope="module")
def saved(files, tmp_path_factory):
    """One Gen-DFL run with every generative option, saved and tested on a file of its own;
    the trainer it built is kept to check that the options reached it."""
    root = tmp_path_factory.mktemp("saved")
    test = root / "T.npz"
    data = portfolio_cvar(num_data=12, num_assets=5, draws=8, seed=4)
    np.savez(test, **data.arrays())
    built = []

    class Spy(ScenarioTrainer):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            built.append(self)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(session, "ScenarioTrainer", Spy)
        result = runner.invoke(app, [
            "train", MODEL, "--data", str(files["instance"]), "--train", str(files["train"]),
            "--test", str(test), "--loss", "gen-dfl", "--epochs", "1", "--batch-size", "15",
            "--lr", "1e-3", "--scenarios", "3", "--beta", "0.5", "--hidden", "8",
            "--generative", "vae", "--save", str(root / "c.pt"), "--json"])
    assert result.exit_code == 0, result.output
    return {"test": test, "ckpt": root / "c.pt", "result": json.loads(result.stdout),
            "trainer": built[0]}


def test_the_generative_options_reach_the_trainer(saved):
    trainer, out = saved["trainer"], saved["result"]
    assert (trainer.scenarios, trainer.beta, trainer.hidden, trainer.kind) == (3, 0.5, 8, "vae")
    assert (out["scenarios"], out["generative"]) == (3, "vae")
    assert out["checkpoint"] == str(saved["ckpt"])


def test_eval_of_the_checkpoint_reports_the_trained_regret(files, saved):
    result = runner.invoke(app, ["eval", MODEL, "--data", str(files["instance"]), "--checkpoint",
                                 str(saved["ckpt"]), "--test", str(saved["test"]), "--json"])
    assert result.exit_code == 0, result.output
    out, trained = json.loads(result.stdout), saved["result"]
    assert out["regret"] == trained["regret"]  # exactly: the same S, seed and cold solves
    for key in ("metric", "alpha", "scenarios", "generative", "true_scenarios", "loss"):
        assert out[key] == trained[key], key
    assert out["samples"] == 12
    assert "relative CVaR regret at α = 0.9" in _stderr(result)


def test_eval_refuses_a_checkpoint_of_another_model(files, saved, tmp_path):
    other = tmp_path / "other.opt"
    other.write_text(Path(MODEL).read_text() + "\n# v2\n")
    result = runner.invoke(app, ["eval", str(other), "--data", str(files["instance"]),
                                 "--checkpoint", str(saved["ckpt"]), "--test", str(saved["test"])])
    assert result.exit_code == 2 and "trained on another model" in _stderr(result)
    assert "Traceback" not in result.output


def test_eval_refuses_a_checkpoint_of_the_other_kind(files, saved, tmp_path):
    """A predictor's checkpoint for a model with `uncertain` params, and the other way round."""
    sp_data, sp_instance, sp_ckpt = tmp_path / "S.npz", tmp_path / "S.json", tmp_path / "p.pt"
    assert runner.invoke(app, ["generate", "shortest_path", "--out", str(sp_data), "--instance",
                               str(sp_instance), "--num-data", "20"]).exit_code == 0
    result = runner.invoke(app, ["train", SHORTEST_PATH, "--data", str(sp_instance), "--train",
                                 str(sp_data), "--epochs", "1", "--save", str(sp_ckpt)])
    assert result.exit_code == 0, result.output
    result = runner.invoke(app, ["eval", MODEL, "--data", str(files["instance"]),
                                 "--checkpoint", str(sp_ckpt), "--test", str(saved["test"])])
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert "holds a predictor of `predicted` params" in _stderr(result)
    result = runner.invoke(app, ["eval", SHORTEST_PATH, "--data", str(sp_instance),
                                 "--checkpoint", str(saved["ckpt"]), "--test", str(sp_data)])
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert "holds a model of `uncertain` params" in _stderr(result)


def _train(files, *args, save=None):
    extra = [] if save is None else ["--save", str(save)]
    return runner.invoke(app, ["train", MODEL, "--data", str(files["instance"]), "--train",
                               str(files["train"]), "--epochs", "1", *args, *extra])


@pytest.mark.parametrize(("args", "words"), [
    (["--scenarios", "0"], "--scenarios must be >= 1"),
    (["--beta", "-1"], "--beta must be a finite number >= 0"),
    (["--beta", "nan"], "--beta must be a finite number >= 0"),
    (["--beta", "inf"], "--beta must be a finite number >= 0"),
    (["--hidden", "0"], "--hidden must be >= 1"),
    (["--generative", "gan"], "unknown generative model `gan`"),
    (["--loss", "mse", "--scenarios", "4"], "--scenarios: only for --loss gen-dfl or nll"),
    (["--loss", "spo+", "--generative", "vae", "--hidden", "8"],
     "--generative, --hidden: only for --loss gen-dfl or nll"),
    (["--loss", "nll", "--beta", "2"], "--beta: weighs the Gen-DFL term, only with --loss "
     "gen-dfl (not nll)"),
    (["--loss", "mse", "--beta", "2"], "--beta: weighs the Gen-DFL term"),
    (["--predictor", "mlp", "--processes", "2"],
     "--predictor, --processes: only for predictors of `predicted` params"),
    (["--optimizer", "sgd"], "--optimizer: only for predictors of `predicted` params"),
    (["--distributed"], "--distributed: only for predictors of `predicted` params"),
], ids=["scenarios", "beta", "beta_nan", "beta_inf", "hidden", "generative", "mse_scenarios",
        "spo_generative", "nll_beta", "mse_beta", "predictor", "optimizer", "distributed"])
def test_option_mistakes_exit_2_and_write_no_checkpoint(files, tmp_path, args, words):
    result = _train(files, "--loss", "gen-dfl", *args, save=tmp_path / "c.pt")
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert words in _stderr(result)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("args", [["--scenarios", "4"], ["--beta", "1"], ["--generative", "flow"]],
                         ids=lambda a: a[0])
def test_generative_options_on_a_predicted_model_exit_2(args):
    result = runner.invoke(app, ["train", SHORTEST_PATH, "--epochs", "1", *args])
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert f"{args[0]}: only for models with `uncertain` params" in _stderr(result)


def test_hidden_on_a_predicted_model_needs_the_mlp_predictor():
    result = runner.invoke(app, ["train", SHORTEST_PATH, "--epochs", "1", "--hidden", "8"])
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert "--hidden: the hidden width of --predictor mlp" in _stderr(result)
    assert "the linear predictor has no hidden layer" in _stderr(result)


def test_a_failed_save_leaves_no_checkpoint(files, tmp_path, monkeypatch):
    def broken(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(torch, "save", broken)
    result = _train(files, "--loss", "mse", save=tmp_path / "c.pt")
    assert result.exit_code == 2 and "disk full" in result.output  # a user's disk: exit 2
    assert list(tmp_path.iterdir()) == []


def test_the_help_states_the_trainers_defaults():
    """The CLI leaves these options unset so ScenarioTrainer's defaults apply; the help text
    repeats them, and must not drift from them."""
    train = typer.main.get_command(app).commands["train"]
    helps = {p.name: p.help for p in train.params}
    for name in ("scenarios", "beta", "generative", "hidden"):
        default = SCENARIO_DEFAULTS[name]
        shown = f"{default:g}" if isinstance(default, float) else default
        assert f"Default: {shown}." in helps[name], name
