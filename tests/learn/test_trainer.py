"""The trainer: a short training lowers test regret, seeds make runs reproducible, non-finite
predictions stop training with a located error, and checkpoints round-trip safely — a
predictor's, and the ScenarioTrainer's generative model, which replays its regret exactly."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from _helpers import bind
from _learn_helpers import EXAMPLES
from torch import nn

import dfl_dsl as dfl
from dfl_dsl.errors import DflError
from dfl_dsl.learn import trainer as trainer_module
from dfl_dsl.learn.dataset import DFLData, ScenarioData
from dfl_dsl.learn.metrics import normalized_regret
from dfl_dsl.learn.predictors import make_predictor
from dfl_dsl.learn.trainer import (
    CHECKPOINT_FORMAT,
    SCENARIO_CHECKPOINT_FORMAT,
    ScenarioTrainer,
    Trainer,
    TrainingError,
    load_checkpoint,
)


@pytest.fixture
def split(sp_inst, sp_generated):
    train, test = sp_generated.split(200)
    return (DFLData.from_arrays(sp_inst, train.arrays()),
            DFLData.from_arrays(sp_inst, test.arrays()))


def _trainer(inst, loss="spo+", **options) -> Trainer:
    options = {"epochs": 2, "batch_size": 32, "lr": 1e-2, "seed": 5, "progress": False,
               **options}
    return Trainer(inst, loss, **options)


# decision-focused losses lower the regret clearly within two epochs; DPO (noisy Stein
# gradients) and MSE (not decision-aware) move it only a little, so they are run, not ranked
@pytest.mark.slow  # six two-epoch trainings
@pytest.mark.parametrize("loss", ["spo+", "pfyl", "dbb", "nce", "dpo", "mse"])
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
    if loss in ("spo+", "pfyl", "dbb", "nce"):
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
@pytest.fixture
def trained(sp_inst, split):
    train, _ = split
    trainer = _trainer(sp_inst, "spo+", epochs=1, predictor="mlp", hidden=8)
    trainer.fit(train.subset(np.arange(64)))
    return trainer


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


@pytest.fixture
def torch_load_calls(monkeypatch) -> list[dict]:
    """The keyword arguments of every `torch.load` in the test (a spy that still loads)."""
    calls: list[dict] = []
    real_load = torch.load

    def spy(*args, **kwargs):
        calls.append(kwargs)
        return real_load(*args, **kwargs)

    monkeypatch.setattr(torch, "load", spy)
    return calls


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


# ---------------------------------------------------------------------- ScenarioTrainer checkpoints
PORTFOLIO = EXAMPLES / "portfolio_cvar" / "portfolio_cvar.opt"


def _portfolio(assets: int = 5):
    """The portfolio-CVaR instance with `assets` assets and 24 samples of 6 true scenarios."""
    from dfl_dsl.generators.portfolio_cvar import portfolio_cvar

    data = portfolio_cvar(num_data=24, num_assets=assets, draws=6, seed=3)
    inst = dfl.load(PORTFOLIO).bind(data.instance)
    return inst, ScenarioData.from_arrays(inst, data.arrays())


@pytest.fixture(scope="module")
def portfolio():
    return _portfolio()


def _scenario_trainer(inst, loss="nll", **options) -> ScenarioTrainer:
    options = {"epochs": 1, "batch_size": 12, "lr": 1e-3, "scenarios": 3, "hidden": 8,
               "progress": False, **options}
    return ScenarioTrainer(inst, loss, **options)


@pytest.fixture(scope="module")
def scenario_trained(portfolio):
    inst, data = portfolio
    trainer = _scenario_trainer(inst, seed=7)
    trainer.fit(data)
    return trainer


@pytest.mark.parametrize(("loss", "generative"), [("nll", "vae"), ("mse", "flow")])
def test_scenario_checkpoint_replays_the_regret(portfolio, tmp_path, loss, generative):
    inst, data = portfolio
    trainer = _scenario_trainer(inst, loss, generative=generative, seed=7)
    trainer.fit(data, data, "test")
    path = tmp_path / "sub" / "gen.pt"
    trainer.save(path)
    loaded = ScenarioTrainer.from_checkpoint(path, inst)
    assert sorted(p.name for p in path.parent.iterdir()) == ["gen.pt"]  # no temp file left
    assert (loaded.kind, loaded.scenarios, loaded.seed, loaded.hidden, loaded.loss_name) == (
        trainer.kind, trainer.scenarios, 7, 8, loss)
    assert loaded.history.epochs == trainer.history.epochs
    # the same decisions, so the very regret `dfl train` printed (not just a close one)
    np.testing.assert_array_equal(loaded.decide(data.features), trainer.decide(data.features))
    assert loaded.risk_regret(data) == trainer.risk_regret(data) == trainer.history.last[
        "test_regret"]


def test_the_scenario_checkpoint_holds_what_rebuilds_it(scenario_trained, portfolio, tmp_path,
                                                        torch_load_calls):
    inst, _ = portfolio
    path = tmp_path / "gen.pt"
    scenario_trained.save(path)
    state = torch.load(path, weights_only=True)
    assert state["format"] == SCENARIO_CHECKPOINT_FORMAT
    assert (state["model_hash"], state["model_name"]) == (inst.model.hash, inst.model.name)
    assert state["generative"] == {"kind": "flow", "dim": 5, "n_features": 5, "hidden": 8}
    assert (state["scenarios"], state["seed"], state["loss"]) == (3, 7, "nll")
    assert len(state["history"]) == 1
    # the scaler's buffers are part of the density: a model without them samples in wrong units
    torch.testing.assert_close(state["state_dict"]["scaler.loc"],
                               scenario_trained.model.scaler.loc.cpu())
    ScenarioTrainer.from_checkpoint(path, inst)
    assert torch_load_calls and all(kw.get("weights_only") is True for kw in torch_load_calls)


def test_a_scenario_checkpoint_of_another_model_or_instance_is_refused(scenario_trained,
                                                                       portfolio, tmp_path):
    inst, _ = portfolio
    path = tmp_path / "gen.pt"
    scenario_trained.save(path)
    other = bind(inst.model.source + "\n# v2", inst.source.values, name="other.opt")
    assert other.model.hash != inst.model.hash
    with pytest.raises(DflError, match="trained on another model") as info:
        ScenarioTrainer.from_checkpoint(path, other)
    assert inst.model.hash in str(info.value) and str(path) in str(info.value)
    fewer_assets, _ = _portfolio(assets=3)  # the same model text, other instance data
    with pytest.raises(DflError, match="draws 5 uncertain values per scenario.* has 3"):
        ScenarioTrainer.from_checkpoint(path, fewer_assets)


def test_a_checkpoint_of_the_other_kind_is_refused(scenario_trained, trained, portfolio, sp_inst,
                                                   tmp_path):
    inst, _ = portfolio
    predictor_ckpt, generative_ckpt = tmp_path / "p.pt", tmp_path / "g.pt"
    trained.save(predictor_ckpt)
    scenario_trained.save(generative_ckpt)
    with pytest.raises(DflError, match="holds a predictor of `predicted` params .* needs a "
                       "model of `uncertain` params"):
        ScenarioTrainer.from_checkpoint(predictor_ckpt, inst)
    with pytest.raises(DflError, match="holds a model of `uncertain` params .* needs a "
                       "predictor of `predicted` params"):
        load_checkpoint(generative_ckpt, sp_inst)
    with pytest.raises(DflError, match="checkpoint not found"):
        ScenarioTrainer.from_checkpoint(tmp_path / "none.pt", inst)


def test_an_interrupted_scenario_save_leaves_nothing_behind(scenario_trained, tmp_path,
                                                            monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("disk full")

    scenario_trained.save(tmp_path / "gen.pt")
    before = (tmp_path / "gen.pt").read_bytes()
    monkeypatch.setattr(torch, "save", broken)
    with pytest.raises(RuntimeError, match="disk full"):
        scenario_trained.save(tmp_path / "gen.pt")
    with pytest.raises(RuntimeError, match="disk full"):
        scenario_trained.save(tmp_path / "new.pt")
    assert [p.name for p in tmp_path.iterdir()] == ["gen.pt"]
    assert (tmp_path / "gen.pt").read_bytes() == before


def test_saving_before_fit_is_refused(portfolio, tmp_path):
    with pytest.raises(DflError, match="call fit"):
        _scenario_trainer(portfolio[0]).save(tmp_path / "gen.pt")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(("options", "words"), [
    ({"scenarios": 0}, "--scenarios must be >= 1"),
    ({"beta": -1.0}, "--beta must be a finite number >= 0"),
    ({"beta": float("nan")}, "--beta must be a finite number >= 0"),
    ({"beta": float("inf")}, "--beta must be a finite number >= 0"),
    ({"hidden": 0}, "--hidden must be >= 1"),
    ({"generative": "gan"}, "unknown generative model `gan`"),
    ({"generative": "point"}, "unknown generative model `point`"),
    ({"loss": "pfyl"}, "unknown loss `pfyl`"),
], ids=["scenarios", "beta", "beta_nan", "beta_inf", "hidden", "gan", "point", "loss"])
def test_bad_scenario_settings_are_refused(portfolio, options, words):
    loss = options.pop("loss", "gen-dfl")
    with pytest.raises(DflError, match=words):
        _scenario_trainer(portfolio[0], loss, **options)


@pytest.mark.parametrize("constraint", ["s.t. cover: x >= d;", "s.t. cap: sum(x) <= 2 * d[0];",
                                        "s.t. cap: d[1] <= sum(x);"],
                         ids=["body", "upper-bound", "lower-bound"])
def test_uncertain_params_in_constraints_are_refused_for_training(constraint):
    """The relative risk regret reads the objective only: with d in a covering constraint, the
    decision under a point forecast (x = forecast, cheaper than the true worst case and
    infeasible for the true scenarios) scored a small regret, its negative regret clamped."""
    inst = bind("param n : int; param d[n] : uncertain; var x[n] in [0, 100];"
                f"minimize cost: sum(x); {constraint}", {"n": 3})
    for loss in ("mse", "nll"):
        with pytest.raises(DflError, match="uncertain params enter the constraint") as info:
            ScenarioTrainer(inst, loss, progress=False)
        assert info.value.filename == "m.opt" and "`c" in str(info.value)


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


def test_risk_regret_of_data_sets_in_turn(scenario_trained, portfolio):
    """The best decisions were cached by id(data): a data set read after another was freed
    took its id and was scored against the other one's best decisions (wrong numbers)."""
    _, data = portfolio
    halves = [(data.features[:12], data.draws[:12]), (data.features[12:], data.draws[12:])]
    fresh = [scenario_trained.risk_regret(ScenarioData(*half)) for half in halves]
    ids = []
    for half in halves * 2:
        one = ScenarioData(*half)
        ids.append(id(one))
        assert scenario_trained.risk_regret(one) == fresh[len(ids) % 2 - 1]
        del one
    assert fresh[0] != fresh[1]


# ---------------------------------------------------------------------- malformed checkpoints
def _corrupted(path, change) -> None:
    """(These were KeyErrors, "unhashable" TypeErrors, torch RuntimeErrors, "predicts 32 values;
    has 32" for a string size, or NaN weights loaded silently.)"""
    state = torch.load(path, weights_only=True)
    if change in ("nan", "shape"):
        first, weight = next(iter(state["state_dict"].items()))
        state["state_dict"][first] = (torch.full_like(weight, float("nan")) if change == "nan"
                                      else torch.zeros(3, 3))
    else:
        change(state)
    torch.save(state, path)


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
    _corrupted(path, change)
    with pytest.raises(DflError, match=message) as info:
        load_checkpoint(path, sp_inst)
    assert info.value.filename == str(path)


@pytest.mark.parametrize(("change", "message"), [
    (lambda s: s.pop("seed"), "has no `seed`"),
    (lambda s: s["generative"].update(dim=True), "`generative.dim` should be a positive"),
    (lambda s: s.update(scenarios=0), "`scenarios` should be a positive integer"),
    (lambda s: s["generative"].update(kind="gan"), "unknown generative model `gan`"),
    ("shape", "weights don't fit its generative model"), ("nan", "holds NaN or infinite"),
])
def test_a_malformed_scenario_checkpoint_is_a_clear_error(scenario_trained, portfolio, tmp_path,
                                                          change, message):
    scenario_trained.save(tmp_path / "gen.pt")
    _corrupted(tmp_path / "gen.pt", change)
    with pytest.raises(DflError, match=message):
        ScenarioTrainer.from_checkpoint(tmp_path / "gen.pt", portfolio[0])
