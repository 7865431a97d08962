"""The trainer: a short training lowers test regret, seeds make runs reproducible, non-finite
predictions stop training with a located error, and checkpoints round-trip safely — a
predictor's, and the ScenarioTrainer's generative model, which replays its regret exactly."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from _helpers import bind
from _learn_helpers import corrupted
from torch import nn

import dfl_dsl as dfl
from dfl_dsl.errors import DflError
from dfl_dsl.learn import trainer as trainer_module
from dfl_dsl.learn.checkpoint import (
    CHECKPOINT_FORMAT,
    load_checkpoint,
)
from dfl_dsl.learn.dataset import DFLData
from dfl_dsl.learn.metrics import normalized_regret
from dfl_dsl.learn.predictors import make_predictor
from dfl_dsl.learn.trainer import Trainer, TrainingError


def _trainer(inst, loss="spo+", **options) -> Trainer:
    options = {"epochs": 2, "batch_size": 32, "lr": 1e-2, "seed": 5, "progress": False,
               **options}
    return Trainer(inst, loss, **options)


# decision-focused losses lower the regret clearly within two epochs; DPO (noisy Stein
# gradients), I-MLE (PyEPO's λ = 10 times an l1 gradient of 1/(batch × n) an entry: a shift
# that rarely changes a decision), pointwise ranking (a regression of the pool's objectives,
# much as MSE) and MSE (not decision-aware) move it only a little, so they are run, not ranked
@pytest.mark.slow  # twelve two-epoch trainings
@pytest.mark.parametrize("loss", ["spo+", "pfyl", "dbb", "nce", "dpo", "mse", "imle", "aimle",
                                  "listwise", "pairwise", "pointwise", "cave"])
def test_short_training_lowers_test_regret(sp_inst, split, loss):
    train, test = split
    trainer = _trainer(sp_inst, loss)
    test.solved(trainer.oracle)
    torch.manual_seed(trainer.seed)  # the untrained predictor fit() starts from
    untrained = make_predictor("linear", train.features.shape[1], trainer.oracle.n_theta)
    with torch.no_grad():
        theta_hat = untrained(torch.as_tensor(test.features, dtype=torch.float32)).double()
    before = normalized_regret(trainer.oracle, theta_hat.numpy(), test.theta, test.w, test.z)
    history = trainer.fit(train, test, "test")
    after = trainer.regret(test)
    assert [e["epoch"] for e in history.epochs] == [1, 2]
    assert all(np.isfinite(e["loss"]) and e["train_time_s"] >= 0 for e in history.epochs)
    assert history.last["test_regret"] == pytest.approx(after)
    assert np.isfinite(after)
    if loss in ("spo+", "pfyl", "dbb", "nce", "aimle", "listwise", "pairwise", "cave"):
        assert after < 0.9 * before
    else:
        assert after != before


def test_the_same_seed_gives_the_same_weights(sp_inst, split):
    train, _ = split
    small = train.subset(np.arange(64))
    runs = []
    for seed in (3, 3, 4):
        trainer = _trainer(sp_inst, "pfyl", epochs=1, seed=seed,
                           loss_options={"n_samples": 2, "seed": seed})
        trainer.fit(small)
        runs.append(trainer.predictor.state_dict())
    for key in runs[0]:
        assert torch.equal(runs[0][key], runs[1][key])
    assert not torch.equal(runs[0]["weight"], runs[2]["weight"])


class _Faulty(nn.Module):
    """A linear predictor whose `fail_at`-th training call returns NaN."""

    def __init__(self, fail_at: int) -> None:
        super().__init__()
        self.linear = nn.Linear(5, 40)
        self.calls, self.fail_at = 0, fail_at

    def forward(self, x):
        self.calls += 1
        out = self.linear(x)
        return out * float("nan") if self.calls == self.fail_at else out


@pytest.mark.parametrize(("fail_at", "epoch", "batch"), [(1, 1, 1), (10, 2, 3)])
def test_non_finite_predictions_stop_training_naming_epoch_and_batch(sp_inst, split, fail_at,
                                                                      epoch, batch):
    train, _ = split  # 200 samples, batches of 32: 7 batches an epoch
    trainer = _trainer(sp_inst, predictor=_Faulty(fail_at), epochs=3)
    with pytest.raises(TrainingError, match=f"epoch {epoch}, batch {batch}") as info:
        trainer.fit(train)
    assert "non-finite predictions" in str(info.value) and "--lr" in str(info.value)
    assert isinstance(info.value, DflError)


@pytest.mark.parametrize(("options", "words"), [
    ({"loss": "hinge"}, "unknown loss"),
    ({"epochs": 0}, "epochs"),
    ({"batch_size": 0}, "batch size"),
    ({"lr": 0.0}, "learning rate"),
    ({"lr": float("nan")}, "learning rate"),
    ({"weight_decay": -1.0}, "weight-decay"),
    ({"weight_decay": float("nan")}, "weight-decay"),
    ({"predictor": "forest"}, "unknown predictor `forest`"),
    ({"optimizer": "rmsprop"}, "unknown optimizer `rmsprop`"),
    ({"device": "tpu"}, "unknown device `tpu`"),
    # these two used to be taken silently: cautious decay of nothing, `max(1, processes)`
    ({"cautious_wd": True}, "--cautious-wd .* --weight-decay is 0"),
    ({"processes": 0}, "--processes must be >= 1"),
], ids=["loss", "epochs", "batch", "lr", "lr_nan", "wd", "wd_nan", "predictor", "optimizer",
        "device", "cautious_no_wd", "processes"])
def test_bad_settings_are_refused(sp_inst, options, words):
    loss = options.pop("loss", "spo+")
    with pytest.raises(DflError, match=words):
        _trainer(sp_inst, loss, **options)


def test_cuda_without_a_device_is_refused(sp_inst, monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(DflError, match="no CUDA device"):
        _trainer(sp_inst, device="cuda")


def test_the_predictor_exists_only_after_fit(sp_inst):
    with pytest.raises(DflError, match="call fit"):
        _ = _trainer(sp_inst).predictor


# ---------------------------------------------------------------------- checkpoints
def test_checkpoint_reproduces_predictions(trained, sp_inst, split, tmp_path):
    _, test = split
    path = tmp_path / "sub" / "ckpt.pt"
    trained.save(path)
    predictor = load_checkpoint(path, sp_inst)
    assert not predictor.training
    with torch.no_grad():
        got = predictor(torch.as_tensor(test.features, dtype=torch.float32)).double().numpy()
    np.testing.assert_array_equal(got, trained.predict(test.features))
    assert sorted(p.name for p in path.parent.iterdir()) == ["ckpt.pt"]  # no temp file left
    # a module passed in is filled rather than rebuilt
    module = make_predictor("mlp", 5, 40, 8)
    assert load_checkpoint(path, sp_inst, module) is module


def test_the_checkpoint_loads_with_weights_only(trained, sp_inst, tmp_path,
                                                torch_load_calls):
    path = tmp_path / "ckpt.pt"
    trained.save(path)
    state = torch.load(path, weights_only=True)
    assert state["format"] == CHECKPOINT_FORMAT
    assert state["model_hash"] == sp_inst.model.hash
    assert state["predictor"] == {"kind": "mlp", "n_features": 5, "n_outputs": 40, "hidden": 8}
    assert len(state["history"]) == 1
    load_checkpoint(path, sp_inst)
    assert torch_load_calls and all(kw.get("weights_only") is True for kw in torch_load_calls)


def test_loading_refuses_a_checkpoint_of_another_model(trained, sp_inst, tmp_path):
    path = tmp_path / "ckpt.pt"
    trained.save(path)
    other = sp_inst.model.source.replace("model shortest_path;", "model shortest_path; # v2")
    other_inst = bind(other, sp_inst.source.values, name="other.opt")
    assert other_inst.model.hash != sp_inst.model.hash
    with pytest.raises(DflError, match="trained on another model") as info:
        load_checkpoint(path, other_inst)
    assert sp_inst.model.hash in str(info.value) and str(path) in str(info.value)


def test_loading_refuses_instance_data_of_another_size(trained, sp_inst, tmp_path):
    """The same model on a bigger grid: the predictor's 40 outputs met 60 arcs inside torch
    (`dfl eval` exited 3 with 'mat1 and mat2 shapes cannot be multiplied')."""
    from dfl_dsl.generators import shortest_path

    path = tmp_path / "ckpt.pt"
    trained.save(path)
    bigger = dfl.load(sp_inst.model.filename).bind(shortest_path(num_data=2, grid=(6, 6))
                                                   .instance)
    with pytest.raises(DflError, match="predicts 40 values per sample; .* has 60") as info:
        load_checkpoint(path, bigger)
    assert "--data" in info.value.hint and info.value.filename == str(path)


def test_loading_refuses_instance_data_whose_entries_come_in_another_order(trained, sp_inst,
                                                                           tmp_path):
    """The same arcs listed in reverse: output k went to another arc, and `dfl eval` scored the
    scrambled predictions silently. A checkpoint without the labels (older) still loads."""
    path = tmp_path / "ckpt.pt"
    trained.save(path)
    data = dict(sp_inst.source.values)
    data["ARCS"] = list(data["ARCS"])[::-1]
    reversed_inst = dfl.load(sp_inst.model.filename).bind(data)
    with pytest.raises(DflError, match=r"output 0 predicts `cost\[.*\]`; with this instance "
                                       r"data it would be read as .* in another order"):
        load_checkpoint(path, reversed_inst)
    load_checkpoint(path, sp_inst)
    state = torch.load(path, weights_only=True)
    del state["entries"]
    torch.save(state, path)
    load_checkpoint(path, reversed_inst)


def test_loading_refuses_missing_and_foreign_files(sp_inst, tmp_path):
    with pytest.raises(DflError, match="checkpoint not found"):
        load_checkpoint(tmp_path / "none.pt", sp_inst)
    junk = tmp_path / "junk.pt"
    junk.write_bytes(b"not a checkpoint")
    with pytest.raises(DflError, match="not a readable checkpoint"):
        load_checkpoint(junk, sp_inst)
    plain = tmp_path / "plain.pt"
    torch.save({"weights": torch.zeros(2)}, plain)
    with pytest.raises(DflError, match="not a dfl-dsl checkpoint"):
        load_checkpoint(plain, sp_inst)


def test_an_interrupted_save_leaves_nothing_behind(trained, tmp_path, monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("disk full")

    monkeypatch.setattr(torch, "save", broken)
    with pytest.raises(RuntimeError, match="disk full"):
        trained.save(tmp_path / "ckpt.pt")
    assert list(tmp_path.iterdir()) == []
    # an existing checkpoint survives a failed overwrite untouched
    monkeypatch.undo()
    trained.save(tmp_path / "ckpt.pt")
    before = (tmp_path / "ckpt.pt").read_bytes()
    monkeypatch.setattr(trainer_module.torch, "save", broken)
    with pytest.raises(RuntimeError):
        trained.save(tmp_path / "ckpt.pt")
    assert [p.name for p in tmp_path.iterdir()] == ["ckpt.pt"]
    assert (tmp_path / "ckpt.pt").read_bytes() == before


class _Scaled(nn.Module):
    """A custom predictor with no nn.Linear inside: θ̂ = x·W."""

    def __init__(self) -> None:
        super().__init__()
        self.w = nn.Parameter(torch.full((5, 40), 0.1))

    def forward(self, x):
        return x @ self.w


def test_a_custom_predictor_checkpoint_needs_the_module(sp_inst, split, tmp_path):
    train, test = split
    trainer = _trainer(sp_inst, predictor=_Scaled(), epochs=1)
    trainer.fit(train.subset(np.arange(32)))
    path = tmp_path / "custom.pt"
    trainer.save(path)
    with pytest.raises(DflError, match="custom predictor: pass the module"):
        load_checkpoint(path, sp_inst)
    module = load_checkpoint(path, sp_inst, _Scaled())
    with torch.no_grad():
        got = module(torch.as_tensor(test.features, dtype=torch.float32)).double().numpy()
    np.testing.assert_array_equal(got, trainer.predict(test.features))


@pytest.mark.slow  # a training with a monitored test set
def test_a_monitored_test_set_never_reaches_the_nce_pool(sp_inst, sp_generated):
    """The test set's optimal decisions (and its predictions' ones) joined the oracle's solution
    pool when each epoch's regret was measured, and NCE trains against that pool: `--test`
    changed the training losses from the second epoch on."""
    train_arrays, test_arrays = (part.arrays() for part in sp_generated.split(200))
    losses, pools = [], []
    for monitor in (None, DFLData.from_arrays(sp_inst, test_arrays)):
        trainer = _trainer(sp_inst, "nce", epochs=3)
        trainer.fit(DFLData.from_arrays(sp_inst, train_arrays), monitor)
        losses.append([e["loss"] for e in trainer.history.epochs])
        pools.append(len(trainer.oracle.pool))
    assert losses[0] == losses[1] and pools[0] == pools[1]


# ---------------------------------------------------------------------- malformed checkpoints
@pytest.mark.parametrize(("change", "message"), [
    (lambda s: s.pop("model_hash"), "has no `model_hash`"),
    (lambda s: s.pop("predictor"), "has no `predictor`"),
    (lambda s: s["predictor"].pop("kind"), "has no `predictor.kind`"),
    (lambda s: s.update(format=["dfl-dsl/checkpoint-1"]), "not a dfl-dsl checkpoint"),
    (lambda s: s.update(model_hash={"a": 1}), "`model_hash` should be text"),
    (lambda s: s["predictor"].update(n_outputs="40"), "`predictor.n_outputs` should be a pos"),
    (lambda s: s["predictor"].update(kind="forest"), "unknown predictor `forest`"),
    (lambda s: s.update(state_dict=[1, 2]), "`state_dict` should be a mapping"),
    (lambda s: s["state_dict"].update(extra=3), "`state_dict` should be a mapping of weight"),
    ("shape", "weights don't fit its predictor: .*size mismatch"), ("nan", "holds NaN or inf"),
])
def test_a_malformed_predictor_checkpoint_is_a_clear_error(trained, sp_inst, tmp_path, change,
                                                           message):
    trained.save(path := tmp_path / "ckpt.pt")
    corrupted(path, change)
    with pytest.raises(DflError, match=message) as info:
        load_checkpoint(path, sp_inst)
    assert info.value.filename == str(path)
