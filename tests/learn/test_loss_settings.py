"""Each loss's settings: the table's defaults are the loss classes' own, a setting the chosen
loss doesn't take or a value out of range is refused before any work (naming the setting and
the loss), and `dfl train` passes its flags to the loss and lists them per loss in --help."""

from __future__ import annotations

import inspect
import json

import pytest
from _learn_helpers import EXAMPLES, SHORTEST_PATH
from typer.testing import CliRunner

from dfl_dsl.cli import app
from dfl_dsl.errors import DflError
from dfl_dsl.learn.loss_registry import LOSSES
from dfl_dsl.learn.loss_settings import (
    LOSS_SETTINGS,
    SETTINGS,
    check_loss_settings,
    given_settings,
    losses_help,
)
from dfl_dsl.learn.trainer import Trainer

runner = CliRunner()


@pytest.mark.parametrize("name", sorted(LOSSES))
def test_the_table_holds_each_loss_classs_own_keywords_and_defaults(name):
    params = list(inspect.signature(LOSSES[name].__init__).parameters.values())[2:]
    own = {p.name: p.default for p in params if p.name != "reduction"}  # after self, inst
    assert LOSS_SETTINGS[name] == own


def test_every_setting_is_taken_by_some_loss():
    assert {k for own in LOSS_SETTINGS.values() for k in own} == set(SETTINGS)


@pytest.mark.parametrize(("loss", "settings", "words"), [
    ("spo+", {"sigma": 2.0}, "--sigma (sigma) is not a setting of --loss spo+"),
    ("dpo", {"lambd": 20.0}, "--lambda (lambd) is not a setting of --loss dpo"),
    ("dbb", {"seed": 3}, "loss option `seed` is not a setting of --loss dbb"),
    ("gen-dfl", {"n_samples": 3}, "--samples (n_samples) is not a setting of --loss gen-dfl"),
    ("pfyl", {"temperature": 1.0}, "unknown loss setting `temperature`"),
    ("dpo", {"n_samples": 0}, "--samples (n_samples) of --loss dpo must be an integer >= 1"),
    ("pfyl", {"n_samples": 2.5}, "must be an integer >= 1, got 2.5"),
    ("pfyl", {"sigma": float("nan")}, "--sigma (sigma) of --loss pfyl must be a number > 0"),
    ("dbb", {"lambd": -1.0}, "must be a number > 0, got -1.0"),
    ("nce", {"solve_ratio": 1.5}, "must be a number in [0, 1], got 1.5"),
    ("nce", {"solve_ratio": True}, "must be a number in [0, 1], got True"),
    ("cave", {"max_iter": 0}, "--max-iter (max_iter) of --loss cave must be an integer >= 1"),
    ("listwise", {"inner_ratio": 0.5}, "--inner-ratio (inner_ratio) is not a setting of --loss "
     "listwise"),
])
def test_a_setting_the_loss_does_not_take_or_a_bad_value_is_refused(loss, settings, words):
    with pytest.raises(DflError) as info:
        check_loss_settings(loss, settings)
    assert words in info.value.message


def test_the_hint_says_what_the_loss_takes_and_who_takes_the_setting():
    with pytest.raises(DflError) as info:
        check_loss_settings("dpo", {"lambd": 20.0})
    assert info.value.hint == ("--loss dpo takes --samples 10, --sigma 1.0, --solve-ratio 1.0, "
                               "--task-loss regret, --no-variance-reduction; --lambda (lambd) "
                               "is for dbb, imle")


def test_good_settings_pass_and_reach_the_loss(sp_inst):
    check_loss_settings("nce", {"solve_ratio": 0, "seed": 4})  # an int 0 is a fine ratio
    trainer = Trainer(sp_inst, "pfyl", progress=False,
                      loss_options={"n_samples": 3, "sigma": 0.25})
    assert (trainer.loss_fn.perturb.n_samples, trainer.loss_fn.perturb.sigma) == (3, 0.25)
    trainer.oracle.close()


def test_dpo_takes_pyepos_options(sp_inst):
    trainer = Trainer(sp_inst, "dpo", progress=False, loss_options={
        "task_loss": "l1", "variance_reduction": False, "solve_ratio": 0.5})
    loss = trainer.loss_fn
    assert (loss.task_loss, loss.variance_reduction, loss.solve_ratio) == ("l1", False, 0.5)
    trainer.oracle.close()
    with pytest.raises(DflError, match="variance_reduction"):
        check_loss_settings("dpo", {"variance_reduction": "no"})


def test_the_trainer_refuses_before_building_an_oracle(sp_inst):
    with pytest.raises(DflError, match="not a setting of --loss spo"):
        Trainer(sp_inst, "spo+", progress=False, loss_options={"n_samples": 3})


def test_given_settings_keeps_only_the_flags_a_command_line_set():
    values = {"n_samples": 3, "sigma": None, "lambd": None, "epochs": 4, "seed": 7,
              "two_sides": False, "variance_reduction": False}
    assert given_settings(values) == {"n_samples": 3}  # --seed is the run's, not the loss's
    # a bool flag given: --two-sides turns it on, --no-variance-reduction turns it off
    flags = {"two_sides": True, "variance_reduction": True}
    assert given_settings(flags) == {"two_sides": True, "variance_reduction": False}


def test_no_variance_reduction_reaches_dpo(sp_inst):
    trainer = Trainer(sp_inst, "dpo", progress=False,
                      loss_options=given_settings({"variance_reduction": True}))
    assert trainer.loss_fn.variance_reduction is False
    trainer.oracle.close()


def test_help_lists_each_losss_settings():
    text = losses_help()
    for line in ("spo+: no settings", "pfyl: --samples 10, --sigma 1.0", "dbb: --lambda 10.0",
                 "nce: --solve-ratio 1.0"):
        assert line in text
    result = runner.invoke(app, ["train", "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0
    assert "dpo: --samples 10, --sigma 1.0, --solve-ratio 1.0, --task-loss regret" in (
        result.stdout)
    assert "pfyl, dpo, imle, aimle: perturbed costs solved per prediction" in result.stdout


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    root = tmp_path_factory.mktemp("settings")
    train, instance = root / "F.npz", root / "I.json"
    result = runner.invoke(app, ["generate", "shortest_path", "--out", str(train),
                                 "--instance", str(instance), "--num-data", "40"])
    assert result.exit_code == 0, result.output
    return ["--data", str(instance), "--train", str(train)]


def test_train_flags_reach_the_loss(files):
    # PFYL solves each training sample's prediction under --samples perturbations: 40 × S
    # solves an epoch, beside the same regret evaluations
    solves = []
    for samples in ("1", "3"):
        result = runner.invoke(app, ["train", str(SHORTEST_PATH), *files, "--epochs", "1",
                                     "--loss", "pfyl", "--samples", samples, "--sigma", "0.5",
                                     "--json", "--oracle", "highs"])
        assert result.exit_code == 0, result.output
        solves.append(json.loads(result.stdout.strip().splitlines()[-1])["oracle_stats"]
                      ["solves"])
    assert solves[1] - solves[0] == 40 * 2


@pytest.mark.parametrize(("args", "words"), [
    (["--loss", "spo+", "--sigma", "2"], "dfl: error: --sigma (sigma) is not a setting of "
     "--loss spo+"),
    (["--loss", "dpo", "--samples", "0"], "--samples (n_samples) of --loss dpo must be an "
     "integer >= 1, got 0"),
    (["--loss", "nce", "--solve-ratio", "2"], "must be a number in [0, 1]"),
    (["--loss", "imle", "--task-loss", "hinge"], "--task-loss (task_loss) of --loss imle must "
     "be regret | l1 | mse, got 'hinge'"),
    (["--loss", "dbb", "--two-sides"], "--two-sides (two_sides) is not a setting of --loss dbb"),
])
def test_train_refuses_a_bad_setting_before_reading_data(tmp_path, args, words):
    missing = ["--data", str(tmp_path / "none.json"), "--train", str(tmp_path / "none.npz")]
    result = runner.invoke(app, ["train", str(SHORTEST_PATH), *missing, *args])
    assert result.exit_code == 2
    assert words in result.stderr.replace("\n", "")
    assert "Traceback" not in result.output


@pytest.mark.parametrize("args", [
    ["--loss", "imle", "--samples", "2", "--lambda", "5", "--two-sides"],
    ["--loss", "aimle", "--samples", "2", "--kappa", "2", "--task-loss", "regret"],
    ["--loss", "listwise", "--solve-ratio", "0.5"],
    ["--loss", "pairwise"],
    ["--loss", "pointwise"],
    ["--loss", "cave", "--max-iter", "5"],
    ["--loss", "cave", "--solve-ratio", "0", "--inner-ratio", "0.5"],
    ["--loss", "dpo", "--samples", "2", "--no-variance-reduction", "--task-loss", "l1"],
])
def test_each_new_loss_trains_from_the_command_line(files, args):
    result = runner.invoke(app, ["train", str(SHORTEST_PATH), *files, "--epochs", "1", "--json",
                                 *args])
    assert result.exit_code == 0, result.output
    row = json.loads(result.stdout.strip().splitlines()[-1])
    assert row["loss"] == args[1] and 0 <= row["regret"] < 2


def test_a_setting_of_an_unknown_loss_names_the_loss(files):
    result = runner.invoke(app, ["train", str(SHORTEST_PATH), *files, "--loss", "imle2",
                                 "--samples", "3"])
    assert result.exit_code == 2
    assert "unknown loss `imle2`" in result.stderr.replace("\n", "")


@pytest.mark.parametrize(("args", "words"), [
    (["--loss", "gen-dfl", "--target", "truth"],
     "--target (target) of --loss gen-dfl must be proxy | draws | observed, got 'truth'"),
    (["--loss", "nll", "--target", "draws"], "--target (target) is not a setting of --loss nll"),
    (["--loss", "spo+", "--target", "draws"], "--target (target) is not a setting of --loss spo+"),
])
def test_gen_dfls_flags_are_checked_before_any_work(args, words):
    model = EXAMPLES / "portfolio_cvar" / "portfolio_cvar.opt"
    result = runner.invoke(app, ["train", str(model), *args])
    assert result.exit_code == 2
    assert words in " ".join(result.output.split())
