"""Which figure `regret` is, in `dfl train` / `dfl eval`'s outputs: PyEPO's normalized regret,
or — every true z* being 0 — the mean regret per sample (`metrics.per_scale`), named in
`--json` ("regret_kind") and in the printed label."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from dfl_dsl.cli import app
from dfl_dsl.learn.metrics import regret_kind

runner = CliRunner()
# x = 0 is optimal for every nonnegative true cost: every z* is 0
ZERO = """set I; param c{I} : predicted;
var x{I} in [0, 1];
minimize f: sum{i in I} c[i] * x[i];"""
# one item must be picked: z* is the cheapest cost, never 0 here
PICK = ZERO + "\ns.t. one: sum{i in I} x[i] == 1;"


def _run(tmp_path, model: str, *extra: str):
    rng = np.random.default_rng(1)
    (tmp_path / "m.opt").write_text(model)
    (tmp_path / "d.json").write_text(json.dumps({"I": [1, 2, 3]}))
    np.savez(tmp_path / "t.npz", features=rng.normal(size=(12, 2)),
             c=rng.uniform(0.5, 2, (12, 3)))
    args = [str(tmp_path / "m.opt"), "--data", str(tmp_path / "d.json")]
    train = runner.invoke(app, ["train", *args, "--train", str(tmp_path / "t.npz"),
                                "--epochs", "1", "--save", str(tmp_path / "c.pt"), *extra])
    assert train.exit_code == 0, train.output
    ev = runner.invoke(app, ["eval", *args, "--checkpoint", str(tmp_path / "c.pt"),
                             "--test", str(tmp_path / "t.npz"), *extra])
    assert ev.exit_code == 0, ev.output
    return train, ev


def test_the_rule_is_per_scales():
    assert regret_kind(1.0) == "normalized" and regret_kind(0.0) == "mean per sample"


@pytest.mark.filterwarnings("ignore::dfl_dsl.learn.metrics.RegretWarning")
def test_json_names_the_mean_per_sample_when_every_z_star_is_0(tmp_path):
    train, ev = _run(tmp_path, ZERO, "--json")
    for result in (train, ev):
        payload = json.loads(result.stdout.strip().splitlines()[-1])
        assert payload["regret_kind"] == "mean per sample", payload
    assert json.loads(train.stdout.strip().splitlines()[-1])["train_regret_kind"] == (
        "mean per sample")


@pytest.mark.filterwarnings("ignore::dfl_dsl.learn.metrics.RegretWarning")
def test_the_label_says_mean_regret_per_sample(tmp_path):
    train, ev = _run(tmp_path, ZERO)
    for result in (train, ev):
        text = result.stdout.replace("\n", " ")
        assert "mean regret per sample" in text and "normalized regret" not in text


def test_a_normalized_regret_is_said_to_be_one(tmp_path):
    train, ev = _run(tmp_path, PICK, "--json")
    for result in (train, ev):
        payload = json.loads(result.stdout.strip().splitlines()[-1])
        assert payload["regret_kind"] == "normalized", payload
    train, ev = _run(tmp_path, PICK)
    for result in (train, ev):
        assert "normalized regret" in result.stdout and "mean regret" not in result.stdout


@pytest.mark.filterwarnings("ignore::dfl_dsl.learn.metrics.RegretWarning")
def test_a_risk_regret_over_zero_optima_is_named_the_mean_per_sample(tmp_path):
    """The same for a model of `uncertain` params: every F(w*, Ξ) is 0 here."""
    rng = np.random.default_rng(2)
    (tmp_path / "m.opt").write_text(ZERO.replace("predicted", "uncertain")
                                    + "\ns.t. cap: sum{i in I} x[i] <= 2;")
    (tmp_path / "d.json").write_text(json.dumps({"I": [1, 2, 3]}))
    np.savez(tmp_path / "t.npz", features=rng.normal(size=(8, 2)),
             c=rng.uniform(0.5, 2, (8, 2, 3)))
    result = runner.invoke(app, [
        "train", str(tmp_path / "m.opt"), "--data", str(tmp_path / "d.json"), "--train",
        str(tmp_path / "t.npz"), "--loss", "mse", "--epochs", "1", "--json"])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout.strip().splitlines()[-1])
    assert payload["regret_kind"] == "mean per sample"
    assert payload["metric"].startswith("mean ") and payload["metric"].endswith(" per sample")
