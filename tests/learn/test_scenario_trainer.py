"""The ScenarioTrainer (Gen-DFL and its baselines): its checkpoint replays the regret exactly and
holds what rebuilds it; checkpoints of another model, instance or kind, malformed ones and
interrupted saves are clear errors that leave nothing behind; bad settings are refused."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from _helpers import bind
from _learn_helpers import EXAMPLES, corrupted

import dfl_dsl as dfl
from dfl_dsl.errors import DflError
from dfl_dsl.learn.checkpoint import SCENARIO_CHECKPOINT_FORMAT, load_checkpoint
from dfl_dsl.learn.dataset import ScenarioData
from dfl_dsl.learn.loss_settings import given_settings
from dfl_dsl.learn.scenario_trainer import ScenarioTrainer

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


@pytest.mark.parametrize(("loss", "settings", "words"), [
    ("gen-dfl", {"pool": 3}, "unknown loss setting `pool`"),
    ("gen-dfl", {"target": "truth"},
     "--target \\(target\\) of --loss gen-dfl must be proxy \\| draws \\| observed, got 'truth'"),
    ("gen-dfl", {"solve_ratio": 1.5}, "--solve-ratio \\(solve_ratio\\) of --loss gen-dfl must "
     "be a number in \\[0, 1\\]"),
    ("gen-dfl", {"solve_ratio": True}, "must be a number in \\[0, 1\\], got True"),
    ("gen-dfl", {"sigma": 1.0}, "--sigma \\(sigma\\) is not a setting of --loss gen-dfl"),
    ("nll", {"target": "draws"}, "--target \\(target\\) is not a setting of --loss nll"),
    ("mse", {"solve_ratio": 0.5}, "--solve-ratio \\(solve_ratio\\) is not a setting of --loss "
     "mse"),
])
def test_bad_gen_dfl_settings_are_refused(portfolio, loss, settings, words):
    with pytest.raises(DflError, match=words):
        _scenario_trainer(portfolio[0], loss, loss_options=settings)


def test_gen_dfl_targets_and_terms(portfolio):
    """The target decision w* of each sample: under the true draws, the observed draw, or the
    NLL fit's scenarios (the default); the β-weighted step is the sum of the two terms."""
    inst, data = portfolio
    for target, draws in (("draws", data.draws), ("observed", data.draws[:, :1])):
        trainer = _scenario_trainer(inst, "gen-dfl", loss_options={"target": target})
        want = trainer.oracle(draws.shape[1]).solve(draws, cold=True)
        assert np.array_equal(trainer.gen_dfl_targets(data), want)
    trainer = _scenario_trainer(inst, "gen-dfl", beta=4.0, pretrain_epochs=0,
                                loss_options={"solve_ratio": 0.0})
    x, y = trainer.init_model(data)
    proxy = trainer.gen_dfl_targets(data)
    assert proxy.shape == (24, 5) and np.allclose(proxy.sum(1), 1.0)
    step = trainer._gen_dfl_setup(data)
    idx = torch.arange(12)
    dfl, nll = (t.detach() for t in trainer.gen_dfl_terms(idx, x[idx], y[idx]))
    assert dfl > 0.0  # the flow's fresh scenarios make w* worse than another pool decision
    # the Gen-DFL term is >= 0 (each w* is in the pool), so the step is at least the NLL
    assert step(idx, x[idx], y[idx]).detach() >= nll


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


@pytest.mark.parametrize(("change", "message"), [
    (lambda s: s.pop("seed"), "has no `seed`"),
    (lambda s: s.update(seed=2**70), r"`seed` should be a whole number from 0 to 2\*\*32 - 1"),
    (lambda s: s["generative"].update(dim=True), "`generative.dim` should be a positive"),
    (lambda s: s.update(scenarios=0), "`scenarios` should be a positive integer"),
    (lambda s: s["generative"].update(kind="gan"), "unknown generative model `gan`"),
    ("shape", "weights don't fit its generative model"), ("nan", "holds NaN or infinite"),
])
def test_a_malformed_scenario_checkpoint_is_a_clear_error(scenario_trained, portfolio, tmp_path,
                                                          change, message):
    scenario_trained.save(tmp_path / "gen.pt")
    corrupted(tmp_path / "gen.pt", change)
    with pytest.raises(DflError, match=message):
        ScenarioTrainer.from_checkpoint(tmp_path / "gen.pt", portfolio[0])


def test_gen_dfl_with_beta_zero_is_the_two_stage_flow(portfolio):
    """One optimizer and batch order run through pretraining and the Gen-DFL phase, so with
    β = 0 gen-dfl trains the very weights `nll` does over as many epochs: any difference
    between the two is the decision term's (a restarted Adam had moved the regret by itself)."""
    inst, data = portfolio
    nll = _scenario_trainer(inst, "nll", epochs=3, seed=5)
    nll.fit(data)
    gen = _scenario_trainer(inst, "gen-dfl", epochs=1, pretrain_epochs=2, beta=0.0, seed=5)
    gen.fit(data)
    for (name, a), b in zip(nll.model.state_dict().items(), gen.model.state_dict().values(),
                            strict=True):
        assert torch.equal(a, b), name
    assert nll.risk_regret(data) == gen.risk_regret(data)


def test_gen_dfl_settings_come_from_dfl_train_flags(portfolio):
    """`dfl train --loss gen-dfl --target observed --solve-ratio 0` gives the trainer those
    settings (given_settings reads the flags back by name); left off, the defaults."""
    flags = {"target": "observed", "solve_ratio": 0.0, "n_samples": None, "two_sides": False}
    trainer = _scenario_trainer(portfolio[0], "gen-dfl", loss_options=given_settings(flags))
    assert trainer.gen_dfl == {"target": "observed", "solve_ratio": 0.0}
    assert _scenario_trainer(portfolio[0], "gen-dfl").gen_dfl == {"target": "proxy",
                                                                   "solve_ratio": 1.0}


def test_a_scenario_checkpoint_read_with_the_entries_in_another_order_is_refused(tmp_path):
    """The same items listed in another order: the model's drawn value k would be read as
    another entry's (as a predictor's outputs were, before its checkpoints named them). A
    checkpoint written before the names were saved still loads."""
    model = """set I; param c{I} : uncertain; var x{I} in [0, 2];
        minimize f: sum{i in I} c[i] * x[i] + 0.5 * worst(sum{i in I} c[i] * x[i]);
        s.t. need: sum{i in I} x[i] >= 2;"""
    rng = np.random.default_rng(0)
    inst = bind(model, {"I": ["a", "b", "c"]})
    data = ScenarioData.from_arrays(inst, {"features": rng.normal(size=(8, 2)),
                                           "c": rng.uniform(0.5, 1.5, (8, 2, 3))})
    trainer = _scenario_trainer(inst, "mse", batch_size=4, seed=1)
    trainer.fit(data)
    path = tmp_path / "gen.pt"
    trainer.save(path)
    assert torch.load(path, weights_only=True)["entries"] == ["c[a]", "c[b]", "c[c]"]
    reordered = bind(model, {"I": ["c", "b", "a"]})
    with pytest.raises(DflError, match=r"drawn value 0 is `c\[a\]`; with this instance data "
                                       r"it would be read as `c\[c\]` .*another order") as info:
        ScenarioTrainer.from_checkpoint(path, reordered)
    assert info.value.filename == str(path)
    ScenarioTrainer.from_checkpoint(path, inst)
    state = torch.load(path, weights_only=True)
    torch.save({**state, "entries": ["c[a]"]}, path)  # hand-edited: one name for 3 values
    with pytest.raises(DflError, match="`entries` is not a list of 3 entry names"):
        ScenarioTrainer.from_checkpoint(path, inst)
    del state["entries"]
    torch.save(state, path)
    ScenarioTrainer.from_checkpoint(path, reordered)
