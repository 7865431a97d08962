"""What a checkpoint must hold before anything is built from it.

`torch.load(weights_only=True)` runs no code from the file, but what it returns is whatever the
file says: a hand-edited or foreign checkpoint with a key missing was a KeyError, a list where a
string belongs an "unhashable" TypeError, a string size ("32") the message "predicts 32 values;
has 32", weights of the wrong shape a RuntimeError inside torch, and NaN weights a silent
nonsense regret. Each is a DflError naming the file and the field here.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import torch
from torch import nn

from ..errors import DflError
from ..seeds import is_seed

_INT = "a positive integer"
_OPT_INT = "a positive integer or null"
_TEXT = "text"
_SEED = "a whole number from 0 to 2**32 - 1"
COMMON = {"model_hash": _TEXT, "model_name": _TEXT, "loss": _TEXT, "history": "a list",
          "state_dict": "a mapping of weight names to tensors"}
FIELDS = {  # by format: the fields beyond COMMON, nested ones as dicts
    "dfl-dsl/checkpoint-1": {
        "predictor": {"kind": _TEXT, "n_features": _OPT_INT, "n_outputs": _INT,
                      "hidden": _OPT_INT}},
    "dfl-dsl/scenario-checkpoint-1": {
        "generative": {"kind": _TEXT, "dim": _INT, "n_features": _INT, "hidden": _INT},
        "scenarios": _INT, "seed": _SEED},
}


def check_fields(state: dict, fmt: str, path: Path) -> None:
    """A DflError at the first field of `state` (a checkpoint of format `fmt`) that is missing
    or of the wrong type, or at a weight that is not finite."""
    _check(state, {**COMMON, **FIELDS[fmt]}, "", path)
    for name, weight in state["state_dict"].items():
        if not isinstance(name, str) or not isinstance(weight, torch.Tensor):
            raise _bad(path, "state_dict", COMMON["state_dict"])
        if weight.is_floating_point() and not bool(torch.isfinite(weight).all()):
            raise DflError(f"the checkpoint's weight `{name}` holds NaN or infinite values",
                           hint="its training diverged: train again (a lower --lr helps)",
                           filename=str(path))


def rebuilt(make: Callable[..., nn.Module], state_dict: dict, what: str, path: Path,
            *args) -> nn.Module:
    """`make(*args)` with the checkpoint's weights loaded; a kind `make` doesn't know or
    weights that don't fit it are a DflError."""
    try:
        module = make(*args)
    except (ValueError, TypeError) as exc:  # an unknown kind; a size of null where one is due
        raise DflError(f"the checkpoint's {what}: {exc}", filename=str(path)) from None
    try:
        module.load_state_dict(state_dict)
    except RuntimeError as exc:
        detail = str(exc).strip().splitlines()
        raise DflError(f"the checkpoint's weights don't fit its {what}: "
                       f"{detail[-1].strip() if detail else exc}", filename=str(path)) from None
    return module


def _check(values: dict, fields: dict, prefix: str, path: Path) -> None:
    for name, want in fields.items():
        where = prefix + name
        if name not in values:
            raise DflError(f"the checkpoint has no `{where}`", filename=str(path),
                           hint="give a checkpoint that `dfl train --save` wrote")
        value = values[name]
        if isinstance(want, dict):
            if not isinstance(value, dict):
                raise _bad(path, where, "a mapping")
            _check(value, want, where + ".", path)
        elif not _fits(value, want):
            raise _bad(path, where, want)


def _fits(value, want: str) -> bool:
    whole = isinstance(value, int) and not isinstance(value, bool)
    if want == _TEXT:
        return isinstance(value, str)
    if want == _INT:
        return whole and value >= 1
    if want == _OPT_INT:
        return value is None or (whole and value >= 1)
    if want == _SEED:
        return is_seed(value)
    if want == "a list":
        return isinstance(value, list)
    return isinstance(value, dict)


def _bad(path: Path, where: str, want: str) -> DflError:
    return DflError(f"the checkpoint's `{where}` should be {want}", filename=str(path),
                    hint="give a checkpoint that `dfl train --save` wrote")
