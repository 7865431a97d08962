"""Each loss's own settings (perturbation samples, σ, λ, NCE's solve ratio, ...): one table of
what every loss takes and its default, read by `dfl train`'s options, its --help, and the check
that refuses a setting the chosen loss doesn't take before any work is done.

Torch-free: the CLI builds its help from it without importing torch. The defaults here are the
loss classes' own keyword defaults (tests/learn/test_loss_settings.py holds them equal), so a
run given no setting is the run a Python user gets from `LOSSES[name](oracle)`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from ..errors import DflError
from ..seeds import is_seed

TASK_LOSSES = ("regret", "l1", "mse")
# where gen-dfl's target decision w* comes from: the frozen NLL fit's scenarios (the proxy of
# the unknown truth), each training sample's draws of the true distribution (the paper's
# synthetic setting, where its code samples a stand-in truth), or its one observed draw
GEN_DFL_TARGETS = ("proxy", "draws", "observed")


@dataclass(frozen=True)
class Setting:
    """One loss setting: its `dfl train` flag (None: Python only, in
    TrainOptions.loss_options), its type, what it does, and what a valid value is."""

    flag: str | None
    kind: type
    help: str
    valid: Callable[[object], bool]
    want: str  # a valid value, in words, for the error
    on: bool = True  # the value a bool setting's flag gives (--no-x: False)


def _count(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


def _positive(value) -> bool:
    return _number(value) and 0 < value < math.inf


def _fraction(value) -> bool:
    return _number(value) and 0 <= value <= 1


def _number(value) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


SETTINGS: dict[str, Setting] = {
    "n_samples": Setting("--samples", int, "perturbed costs solved per prediction "
                         "(Monte-Carlo samples)", _count, "an integer >= 1"),
    "sigma": Setting("--sigma", float, "scale σ of the perturbation (the noise's standard "
                     "deviation; for I-MLE its temperature)", _positive, "a number > 0"),
    "lambd": Setting("--lambda", float, "interpolation step λ of the solver's finite "
                     "difference", _positive, "a number > 0"),
    "kappa": Setting("--kappa", float, "shape κ of the Sum-of-Gamma noise (Niepert et al. "
                     "2021)", _positive, "a number > 0"),
    "two_sides": Setting("--two-sides", bool, "central difference w(ĉ + λg) - w(ĉ - λg) "
                         "instead of the one-sided one", lambda v: isinstance(v, bool),
                         "true or false"),
    "task_loss": Setting("--task-loss", str, "what the smoothed decision is trained on: "
                         "regret (cᵀw̄ - z*), l1 or mse against w*",
                         lambda v: v in TASK_LOSSES, " | ".join(TASK_LOSSES)),
    "solve_ratio": Setting("--solve-ratio", float, "fraction of steps that solve: the "
                           "pool losses add the predictions' solutions to the solution pool "
                           "(the other steps use the pool alone; gen-dfl: the decisions "
                           "under the generated scenarios); cave projects onto the cone (the "
                           "others take its cheap stand-in)", _fraction, "a number in [0, 1]"),
    "target": Setting("--target", str, "where the target decision w* comes from: proxy "
                      "(the NLL fit's scenarios), draws (each training sample's true draws, "
                      "the paper's synthetic setting), observed (its one observed draw)",
                      lambda v: v in GEN_DFL_TARGETS, " | ".join(GEN_DFL_TARGETS)),
    "max_iter": Setting("--max-iter", int, "interior-point iterations of the cone projection "
                        "(3, CaVE+: under-converged on purpose, inside the cone)", _count,
                        "an integer >= 1"),
    "inner_ratio": Setting("--inner-ratio", float, "weight of the mean binding normal in the "
                           "projection's stand-in on the steps --solve-ratio skips (CaVE "
                           "hybrid)", _fraction, "a number in [0, 1]"),
    "variance_reduction": Setting("--no-variance-reduction", bool, "drop the leave-one-out "
                                  "baseline from DPO's Stein gradient (PyEPO's default keeps "
                                  "it)", lambda v: isinstance(v, bool), "true or false",
                                  on=False),
    "seed": Setting(None, int, "the loss's own random generator", is_seed,
                    "a whole number from 0 to 2**32 - 1"),
}

_PERTURBED = {"n_samples": 10, "sigma": 1.0, "seed": 135}
_POOL = {"solve_ratio": 1.0, "seed": 135}

LOSS_SETTINGS: dict[str, dict[str, object]] = {
    "spo+": {},
    "pfyl": dict(_PERTURBED),
    "dpo": {**_PERTURBED, "variance_reduction": True, "solve_ratio": 1.0,
            "task_loss": "regret"},
    "dbb": {"lambd": 10.0},
    "nce": dict(_POOL),
    "imle": {"n_samples": 10, "sigma": 1.0, "lambd": 10.0, "kappa": 5.0, "two_sides": False,
             "task_loss": "l1", "seed": 135},
    "aimle": {"n_samples": 10, "sigma": 1.0, "kappa": 5.0, "two_sides": False,
              "task_loss": "l1", "seed": 135},
    "listwise": dict(_POOL),
    "pairwise": dict(_POOL),
    "pointwise": dict(_POOL),
    "cave": {"max_iter": 3, "solve_ratio": 1.0, "inner_ratio": 0.2, "seed": 135},
    "mse": {},
    "gen-dfl": {"target": "proxy", "solve_ratio": 1.0},
}
"""loss -> {setting: its default} (gen-dfl's are the ScenarioTrainer's)."""
GENERATIVE_LOSSES = ("gen-dfl", "nll")  # (of `uncertain` params: --scenarios, --beta instead)


def flag_of(key: str) -> str:
    """How an error names a setting: its flag, or the loss_options key for Python-only ones."""
    flag = SETTINGS[key].flag
    return f"{flag} ({key})" if flag else f"loss option `{key}`"


def takes(loss: str) -> str:
    """What `loss` takes, in words: `--samples 10, --sigma 1.0` (defaults), or `no settings`."""
    given = [(SETTINGS[k].flag, v) for k, v in LOSS_SETTINGS.get(loss, {}).items()
             if SETTINGS[k].flag]
    # a bool flag shows as itself: --two-sides turns on, --no-variance-reduction off
    words = [f"{flag} {v}" for flag, v in given if not isinstance(v, bool)]
    words += [flag for flag, v in given if isinstance(v, bool)]
    return ", ".join(words) or "no settings"


def check_loss_settings(loss: str, settings: dict | None) -> None:
    """Refuse, naming the setting and the loss, a setting `loss` doesn't take (it would be
    silently ignored) and a value out of range (before any data is read or solved). An
    unknown loss is left to the trainers, which name the losses they know."""
    if loss not in LOSS_SETTINGS and loss not in GENERATIVE_LOSSES:
        return
    own = LOSS_SETTINGS.get(loss, {})
    for key, value in (settings or {}).items():
        if key not in SETTINGS:
            raise DflError(f"unknown loss setting `{key}`",
                           hint="the settings: " + ", ".join(SETTINGS))
        if key not in own:
            raise DflError(f"{flag_of(key)} is not a setting of --loss {loss}",
                           hint=f"--loss {loss} takes {takes(loss)}; "
                           f"{flag_of(key)} is for " + (", ".join(users(key)) or "no loss"))
        if not SETTINGS[key].valid(value):
            raise DflError(f"{flag_of(key)} of --loss {loss} must be {SETTINGS[key].want}, "
                           f"got {value!r}")


def users(key: str) -> list[str]:
    """The losses that take setting `key`."""
    return [loss for loss, own in LOSS_SETTINGS.items() if key in own]


def settings_help(key: str) -> str:
    """The --help line of a setting's flag: which losses take it, what it does, defaults."""
    defaults = {LOSS_SETTINGS[loss][key] for loss in users(key)}
    default = "" if SETTINGS[key].kind is bool else (
        f" Default: {defaults.pop()}." if len(defaults) == 1 else "")
    return f"{', '.join(users(key))}: {SETTINGS[key].help}.{default}"


def losses_help() -> str:
    """`dfl train --help`'s list of every loss with the settings it takes and their defaults."""
    lines = [f"{loss}: {takes(loss)}" for loss in LOSS_SETTINGS]
    return "Loss settings (each loss takes only its own; defaults shown):\n\n" + "\n\n".join(
        lines)


def given_settings(values: dict) -> dict:
    """The loss settings a command line gave: its flags' values that aren't None (or a bool
    flag left off)."""
    given = {k: v for k, v in values.items() if k in SETTINGS and SETTINGS[k].flag
             and v is not None and v is not False}
    return {k: SETTINGS[k].on if SETTINGS[k].kind is bool else v for k, v in given.items()}
