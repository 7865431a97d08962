"""`dfl generate`, `dfl train` and `dfl eval` end to end through the CLI (typer's runner):
JSON output, checkpoints and plots, and exit 2 with a clear message on user errors."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest
import torch
import typer
from _learn_helpers import SHORTEST_PATH
from typer.testing import CliRunner

from dfl_dsl.cli import app
from dfl_dsl.learn.options import PREDICTOR_DEFAULTS

runner = CliRunner()
MODEL = str(SHORTEST_PATH)


def _stderr(result) -> str:
    """stderr with rich's line wrapping (at 80 columns off a terminal) undone."""
    return result.stderr.replace("\n", "")


def _json(result) -> dict:
    """The JSON object `--json` prints: the last line of stdout."""
    return json.loads(result.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """A generated data set and one training run on it, shared by the tests below."""
    root = tmp_path_factory.mktemp("cli")
    paths = {k: root / v for k, v in
             dict(train="F.npz", instance="I.json", ckpt="C.pt", plot="P.png").items()}
    result = runner.invoke(app, [
        "generate", "shortest_path", "--out", str(paths["train"]),
        "--instance", str(paths["instance"]), "--num-data", "300", "--deg", "2",
        "--noise", "0.5"])
    assert result.exit_code == 0, result.output
    assert "wrote 300 samples" in result.stdout
    result = runner.invoke(app, [
        "train", MODEL, "--data", str(paths["instance"]), "--train", str(paths["train"]),
        "--epochs", "2", "--json", "--save", str(paths["ckpt"]), "--plot", str(paths["plot"])])
    assert result.exit_code == 0, result.output
    paths["result"] = json.loads(result.stdout)  # stdout is exactly one JSON object
    return paths


def test_generate_writes_a_training_file_and_the_instance(files):
    arrays = np.load(files["train"])
    assert sorted(arrays.files) == ["cost", "features"]
    assert arrays["features"].shape == (300, 5) and arrays["cost"].shape == (300, 40)
    instance = json.loads(files["instance"].read_text())
    assert len(instance["ARCS"]) == 40 and instance["sink"] == 24
    assert not [p for p in files["train"].parent.iterdir() if p.name.startswith(".")]


def test_train_json_checkpoint_and_plot(files):
    result = files["result"]
    assert {"regret", "epochs", "time_s", "history"} <= set(result)
    assert result["epochs"] == 2 and len(result["history"]) == 2
    assert 0 <= result["regret"] < 1 and result["time_s"] > 0
    assert result["checkpoint"] == str(files["ckpt"]) and files["ckpt"].stat().st_size > 0
    assert files["plot"].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_eval_reports_the_checkpoints_regret(files):
    result = runner.invoke(app, [
        "eval", MODEL, "--data", str(files["instance"]), "--checkpoint", str(files["ckpt"]),
        "--test", str(files["train"]), "--json"])
    assert result.exit_code == 0, result.output
    payload = _json(result)
    assert payload["samples"] == 300
    # no --test at training time: its regret was on the same (training) file
    assert payload["regret"] == pytest.approx(files["result"]["regret"], rel=1e-9)


def test_eval_device_is_checked_before_any_work(files, monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    for device, words in (("tpu", "unknown device `tpu`"), ("cuda", "no CUDA device")):
        result = runner.invoke(app, [
            "eval", MODEL, "--data", str(files["instance"]), "--checkpoint", str(files["ckpt"]),
            "--test", str(files["train"]), "--device", device])
        assert result.exit_code == 2 and words in _stderr(result)
    result = runner.invoke(app, [
        "eval", MODEL, "--data", str(files["instance"]), "--checkpoint", str(files["ckpt"]),
        "--test", str(files["train"]), "--device", "cpu", "--json"])
    assert _json(result)["regret"] == pytest.approx(files["result"]["regret"], rel=1e-9)


def test_eval_refuses_a_checkpoint_of_another_model(files, tmp_path):
    other = tmp_path / "other.opt"
    other.write_text(SHORTEST_PATH.read_text().replace("model shortest_path;",
                                                       "model other_path;"))
    result = runner.invoke(app, [
        "eval", str(other), "--data", str(files["instance"]), "--checkpoint", str(files["ckpt"]),
        "--test", str(files["train"]), "--json"])
    assert result.exit_code == 2
    assert "trained on another model" in _stderr(result)
    assert "Traceback" not in result.output


def test_a_test_file_with_other_features_exits_2(files, tmp_path):
    arrays = dict(np.load(files["train"]))
    narrow = tmp_path / "narrow.npz"
    np.savez(narrow, features=arrays["features"][:20, :3], cost=arrays["cost"][:20])
    for command in (["eval", MODEL, "--checkpoint", str(files["ckpt"])],
                    ["train", MODEL, "--train", str(files["train"]), "--epochs", "1"]):
        result = runner.invoke(app, [*command, "--data", str(files["instance"]),
                                     "--test", str(narrow)])
        assert result.exit_code == 2, result.output
        assert "`features` has 3 columns; the predictor reads 5" in _stderr(result)


def test_a_training_file_without_the_predicted_param_exits_2(files, tmp_path):
    arrays = dict(np.load(files["train"]))
    del arrays["cost"]
    bad = tmp_path / "bad.npz"
    np.savez(bad, **arrays)
    result = runner.invoke(app, ["train", MODEL, "--data", str(files["instance"]),
                                 "--train", str(bad), "--epochs", "1"])
    assert result.exit_code == 2
    assert "no array for predicted param `cost`" in _stderr(result)


def test_gen_dfl_on_a_predicted_model_names_every_loss_that_takes_it(files):
    """Its hint listed 5 of the 12 losses (spo+, pfyl, dbb, nce, mse)."""
    from dfl_dsl.learn.loss_registry import LOSSES

    result = runner.invoke(app, ["train", MODEL, "--data", str(files["instance"]),
                                 "--train", str(files["train"]), "--loss", "gen-dfl"])
    assert result.exit_code == 2
    assert "--loss " + " | ".join(LOSSES) in _stderr(result) and "cave" in LOSSES


def test_train_the_objective_named(files, tmp_path):
    """A model with a second objective declared first: `--objective length` trains through the
    same problem as the model with that one alone (the same regret, seed for seed)."""
    model = tmp_path / "two.opt"
    model.write_text(SHORTEST_PATH.read_text().replace(
        "minimize length", "maximize arcs_used: sum{(i, j) in ARCS} flow[i, j];\nminimize length"))
    result = runner.invoke(app, ["train", str(model), "--data", str(files["instance"]),
                                 "--train", str(files["train"]), "--epochs", "2", "--json",
                                 "--objective", "length"])
    assert result.exit_code == 0, result.output
    assert _json(result)["regret"] == pytest.approx(files["result"]["regret"])


def test_train_without_data_or_a_recipe_exits_2(files, tmp_path):
    model = tmp_path / "sp.opt"
    shutil.copy(SHORTEST_PATH, model)
    result = runner.invoke(app, ["train", str(model), "--data", str(files["instance"])])
    assert result.exit_code == 2
    assert "no training data" in _stderr(result) and "sp.gen.yaml" in _stderr(result)


def test_train_takes_a_recipe_as_its_training_data(tmp_path):
    """`--train FILE.gen.yaml` generates, splits and binds as a recipe beside the model does."""
    recipe = tmp_path / "small.gen.yaml"
    recipe.write_text("generator: shortest_path\nargs: {num_data: 60, deg: 2, seed: 3}\n"
                      "train: 40\nsplit_seed: 1\n")
    result = runner.invoke(app, ["train", MODEL, "--train", str(recipe), "--epochs", "1",
                                 "--json"])
    assert result.exit_code == 0, result.output
    out = _json(result)
    assert out["regret_on"] == "test" and 0 <= out["regret"] < 1  # the recipe's 20 held out


@pytest.mark.parametrize(("args", "words"), [
    (["--loss", "hinge"], "unknown loss `hinge`"),
    (["--plot", "curve.svg"], "--plot writes a PNG"),
    (["--epochs", "0"], "epochs"),
    (["--optimizer", "rmsprop"], "unknown optimizer `rmsprop`"),
    (["--predictor", "forest"], "unknown predictor `forest`"),
])
def test_train_option_mistakes_exit_2(files, args, words):
    result = runner.invoke(app, ["train", MODEL, "--data", str(files["instance"]),
                                 "--train", str(files["train"]), *args])
    assert result.exit_code == 2
    assert words in _stderr(result)


def test_generate_mistakes_exit_2(tmp_path):
    result = runner.invoke(app, ["generate", "shortest_path", "--out", str(tmp_path / "x.npz"),
                                 "--grid", "5by5"])
    assert result.exit_code == 2 and "--grid must look like 5x5" in _stderr(result)
    result = runner.invoke(app, ["generate", "shortest_path", "--out", str(tmp_path / "x.csv"),
                                 "--num-data", "5"])
    assert result.exit_code == 2 and ".npz" in _stderr(result)
    result = runner.invoke(app, ["generate", "tsp", "--out", str(tmp_path / "x.npz")])
    assert result.exit_code == 2 and "unknown generator `tsp`" in _stderr(result)
    result = runner.invoke(app, ["generate", "knapsack", "--out", str(tmp_path / "x.npz"),
                                 "--deg", "0"])
    assert result.exit_code == 2 and "deg must be a positive integer" in _stderr(result)
    (tmp_path / "sub").mkdir()  # --instance a folder: refused before --out is written
    result = runner.invoke(app, ["generate", "knapsack", "--out", str(tmp_path / "x.npz"),
                                 "--num-data", "5", "--instance", str(tmp_path / "sub")])
    assert result.exit_code == 2 and "--instance" in _stderr(result)
    assert "is a folder" in _stderr(result)
    assert list(tmp_path.iterdir()) == [tmp_path / "sub"]


def test_hidden_sets_the_mlp_predictors_width(files, tmp_path):
    ckpt = tmp_path / "mlp.pt"
    result = runner.invoke(app, ["train", MODEL, "--data", str(files["instance"]),
                                 "--train", str(files["train"]), "--epochs", "1",
                                 "--predictor", "mlp", "--hidden", "8", "--save", str(ckpt)])
    assert result.exit_code == 0, result.output
    assert torch.load(ckpt, weights_only=True)["predictor"]["hidden"] == 8
    result = runner.invoke(app, ["train", MODEL, "--data", str(files["instance"]),
                                 "--train", str(files["train"]), "--predictor", "mlp",
                                 "--hidden", "0"])
    assert result.exit_code == 2 and "--hidden must be >= 1" in _stderr(result)


def test_threads_below_one_are_refused(files):
    result = runner.invoke(app, ["train", MODEL, "--data", str(files["instance"]),
                                 "--train", str(files["train"]), "--threads", "0"])
    assert result.exit_code == 2 and "--threads must be >= 1" in _stderr(result)


def test_the_help_states_the_mlp_predictors_default_width():
    default = PREDICTOR_DEFAULTS["hidden"]
    train = typer.main.get_command(app).commands["train"]
    assert f"--predictor mlp (Default: {default}.)" in {p.name: p.help for p in train.params}[
        "hidden"]


def test_eval_without_a_test_file_or_a_recipe_asks_for_test(files, tmp_path):
    """It asked for `--train FILE.npz`, an option `dfl eval` doesn't have."""
    model = tmp_path / "sp.opt"
    shutil.copy(SHORTEST_PATH, model)
    result = runner.invoke(app, ["eval", str(model), "--data", str(files["instance"]),
                                 "--checkpoint", str(files["ckpt"])])
    assert result.exit_code == 2
    assert "no test data: give --test FILE.npz" in _stderr(result)
    assert "--train" not in _stderr(result)


@pytest.mark.parametrize("clash", ["train", "instance", "save-plot", "model"])
def test_an_output_that_would_overwrite_an_input_or_output_exits_2(files, tmp_path, clash):
    """`--save train.npz` overwrote the training file with the checkpoint (and `--save` on the
    instance data or `--save x.png --plot x.png` lost one of them), exit 0."""
    train, instance = tmp_path / "T.npz", tmp_path / "I.json"
    shutil.copy(files["train"], train)
    shutil.copy(files["instance"], instance)
    model = tmp_path / "sp.opt"
    shutil.copy(SHORTEST_PATH, model)
    before = {p: p.read_bytes() for p in (train, instance, model)}
    outputs = {"train": ["--save", str(train)], "instance": ["--save", str(instance)],
               "save-plot": ["--save", str(tmp_path / "x.png"), "--plot", str(tmp_path / "x.png")],
               "model": ["--plot", str(model.with_suffix(".png")), "--save", str(model)]}[clash]
    result = runner.invoke(app, ["train", str(model), "--data", str(instance), "--train",
                                 str(train), "--epochs", "1", *outputs])
    assert result.exit_code == 2, result.output
    assert "would overwrite" in _stderr(result)
    assert {p: p.read_bytes() for p in (train, instance, model)} == before
    assert not (tmp_path / "x.png").exists() and not model.with_suffix(".png").exists()


def test_generate_refuses_one_path_for_out_and_instance(tmp_path):
    out = tmp_path / "x.npz"
    result = runner.invoke(app, ["generate", "knapsack", "--num-data", "5", "--out", str(out),
                                 "--instance", str(out)])
    assert result.exit_code == 2 and "--instance" in _stderr(result)
    assert "would overwrite --out" in _stderr(result) and not out.exists()


def test_train_and_eval_a_convex_qp_with_a_loss_that_takes_it(tmp_path):
    """A portfolio whose returns are predicted and whose risk is quadratic: PFYL trains it
    (its regret falls below the untrained predictor's), `dfl eval` replays the regret, and
    SPO+ (built on a linear objective) exits 2 naming the losses that train a QP."""
    model = tmp_path / "pf.opt"
    model.write_text("set A; param r{A} : predicted; param risk{A} >= 0;\n"
                     "var w{A} >= 0;\n"
                     "maximize u: sum{a in A} (r[a] * w[a] - risk[a] * w[a]^2);\n"
                     "subject to budget: sum{a in A} w[a] == 1;\n")
    data = tmp_path / "pf.json"
    data.write_text(json.dumps({"A": ["a", "b", "c", "d"], "risk": [1.0, 2.0, 0.5, 1.5]}))
    rng = np.random.default_rng(0)
    features = rng.normal(size=(160, 3))
    returns = features @ rng.normal(size=(3, 4)) + 0.1 * rng.normal(size=(160, 4))
    train, test, ckpt = tmp_path / "tr.npz", tmp_path / "te.npz", tmp_path / "c.pt"
    np.savez(train, features=features[:120], r=returns[:120])
    np.savez(test, features=features[120:], r=returns[120:])
    base = ["--data", str(data), "--train", str(train), "--test", str(test), "--json"]
    result = runner.invoke(app, ["train", str(model), *base, "--loss", "pfyl", "--epochs", "4",
                                 "--lr", "0.05", "--save", str(ckpt)])
    assert result.exit_code == 0, result.output
    out = _json(result)  # (test regret after each epoch, measured: 0.30, 0.13, 0.07, 0.05)
    assert out["oracle"] == "highs" and out["history"][-1]["test_regret"] == out["regret"]
    assert out["regret"] < 0.5 * out["history"][0]["test_regret"]
    replay = runner.invoke(app, ["eval", str(model), "--checkpoint", str(ckpt), "--data",
                                 str(data), "--test", str(test), "--json"])
    assert replay.exit_code == 0, replay.output
    assert _json(replay)["regret"] == pytest.approx(out["regret"], rel=1e-9)
    refused = runner.invoke(app, ["train", str(model), *base, "--loss", "spo+"])
    assert refused.exit_code == 2
    assert "needs a linear objective" in _stderr(refused)
    assert "pfyl | dpo | dbb | mse" in _stderr(refused)


@pytest.mark.parametrize("seed", ["-1", str(2**70)])
def test_train_with_a_seed_out_of_range_exits_2_before_any_work(files, seed):
    result = runner.invoke(app, ["train", MODEL, "--data", str(files["instance"]), "--train",
                                 str(files["train"]), "--epochs", "1", "--seed", seed])
    assert result.exit_code == 2, result.output
    assert "--seed must be a whole number from 0 to 2**32 - 1" in _stderr(result)


def test_training_values_that_break_a_declared_check_exit_2(tmp_path):
    model = tmp_path / "m.opt"
    model.write_text("set E;\nparam c{E} : predicted >= 0;\nvar x{E} in [0, 1];\n"
                     "minimize f: sum{e in E} c[e] * x[e];\ns.t. one: sum{e in E} x[e] == 1;\n")
    data = tmp_path / "d.json"
    data.write_text('{"E": ["a", "b", "c"]}')
    c = np.ones((6, 3))
    c[4, 0] = -1.5
    train = tmp_path / "t.npz"
    np.savez(train, features=np.ones((6, 2)), c=c)
    result = runner.invoke(app, ["train", str(model), "--data", str(data), "--train", str(train),
                                 "--epochs", "1"])
    assert result.exit_code == 2, result.output
    assert f"m.opt:2:24: error: `c`[a] in sample 5 of {train}'s array `c` (row 4): value " \
           "-1.5 breaks `>= 0`" in _stderr(result)
    assert "Traceback" not in result.output


def test_zero_optima_report_the_mean_regret_with_one_warning(tmp_path):
    """Costs >= 0 over x in [0, 1]: every z* is 0; the regret per epoch and at the end is the
    mean regret (not 10⁷ × it), and stderr says so once."""
    model = tmp_path / "z.opt"
    model.write_text("set I; param c{I} : predicted;\nvar x{I} in [0, 1];\n"
                     "minimize f: sum{i in I} c[i] * x[i];\n")
    data = tmp_path / "z.json"
    data.write_text('{"I": [1, 2, 3]}')
    rng = np.random.default_rng(0)
    train = tmp_path / "t.npz"
    np.savez(train, features=rng.normal(size=(20, 3)), c=rng.uniform(0, 1, (20, 3)))
    result = runner.invoke(app, ["train", str(model), "--data", str(data), "--train", str(train),
                                 "--test", str(train), "--epochs", "3", "--json"])
    assert result.exit_code == 0, result.output
    assert _stderr(result).count("every true optimal objective z* is 0") == 1
    payload = _json(result)
    assert 0 <= payload["regret"] <= 3  # at most the sum of one sample's costs
