"""`dfl train-solver` and `train_solver`: a short unrolled training run saves a policy that
`dfl solve --backend flexqp` can load; bad input is a user error."""

from __future__ import annotations

import json

import pytest
import torch
from _helpers import spec_dir
from typer.testing import CliRunner

import dfl_dsl as dfl
from dfl_dsl.backends.flexqp import DeepPolicy
from dfl_dsl.backends.flexqp.train import train_solver
from dfl_dsl.cli import app
from dfl_dsl.errors import DflError


def test_training_moves_the_weights_and_saves_a_loadable_policy(tmp_path):
    path = tmp_path / "p.pt"
    result = CliRunner().invoke(app, ["train-solver", "--save", str(path), "--classes",
                                      "random_qp,svm", "--size", "3", "--batch", "4", "--steps",
                                      "3", "--unroll", "20", "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["steps"] == 3 and all(map(lambda v: v == v, report["history"]))
    trained = DeepPolicy.load(path)
    untrained = DeepPolicy()
    assert not torch.equal(trained.row_head.weight, untrained.row_head.weight)
    assert trained.meta["classes"] == ["random_qp", "svm"]
    spec = spec_dir()
    sol = dfl.load(spec / "qp.opt").bind(spec / "qp.json").solve("flexqp", policy=str(path))
    assert sol.status == "optimal"


def test_unknown_class_is_a_user_error(tmp_path):
    result = CliRunner().invoke(app, ["train-solver", "--save", str(tmp_path / "p.pt"),
                                      "--classes", "random_qp,nope"])
    assert result.exit_code == 2 and "nope" in result.output


def test_train_solver_returns_the_loss_history():
    policy, history = train_solver(classes=["eq_qp"], size=3, batch=2, steps=2, unroll=20)
    assert len(history) == 2 and isinstance(policy, DeepPolicy)
    with pytest.raises(DflError):  # the policy acts every 10 iterations: nothing to learn
        train_solver(classes=["eq_qp"], size=3, batch=2, steps=1, unroll=10)


def test_a_full_disk_during_save_is_a_user_error_with_no_truncated_file(tmp_path, monkeypatch):
    # a full disk left a truncated .pt and an internal error (exit 3)
    path = tmp_path / "p.pt"
    real_save = torch.save

    def disk_fills(obj, handle):
        real_save(obj, handle)
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(torch, "save", disk_fills)
    result = CliRunner().invoke(app, ["train-solver", "--save", str(path), "--classes", "eq_qp",
                                      "--size", "3", "--batch", "2", "--steps", "2", "--unroll",
                                      "20", "--json"])
    assert result.exit_code == 2, result.output
    assert "No space left on device" in result.output and list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("content", [{"state": {}}, {"hidden": "x", "every": 10, "state": {}},
                                     [1, 2]])
def test_a_malformed_policy_file_is_a_user_error(tmp_path, content):
    path = tmp_path / "bad.pt"
    torch.save(content, path)
    spec = spec_dir()
    inst = dfl.load(spec / "qp.opt").bind(spec / "qp.json")
    with pytest.raises(DflError, match="can't load the FlexQP policy"):
        inst.solve("flexqp", policy=str(path))
