"""Checkpoints: what `dfl train --save` writes and every load checks before any weight is used
(readable without running code, ours, of the expected kind, trained on this model and size)."""

from __future__ import annotations

from pathlib import Path

import torch
from torch import nn

from ..errors import DflError
from .checkpoint_fields import check_fields, rebuilt
from .predictors import make_predictor

CHECKPOINT_FORMAT = "dfl-dsl/checkpoint-1"
SCENARIO_CHECKPOINT_FORMAT = "dfl-dsl/scenario-checkpoint-1"
CHECKPOINT_HOLDS = {  # what each format holds, for the message when the other kind is given
    CHECKPOINT_FORMAT: "a predictor of `predicted` params",
    SCENARIO_CHECKPOINT_FORMAT: "a model of `uncertain` params (generative or point)",
}


def read_checkpoint(path: str | Path, inst, expected: str) -> dict:
    """The checks every checkpoint passes before its weights are used: readable with
    `weights_only` (no code runs from the file), ours, of the `expected` kind, and trained on
    `inst`'s model (a checkpoint of another model would load into same-shaped layers and
    silently decide for the wrong problem)."""
    path = Path(path)
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except FileNotFoundError:
        raise DflError("checkpoint not found", filename=str(path)) from None
    except Exception as exc:
        raise DflError(f"not a readable checkpoint ({type(exc).__name__})",
                       filename=str(path)) from None
    found = state.get("format") if isinstance(state, dict) else None
    if not isinstance(found, str) or found not in CHECKPOINT_HOLDS:
        raise DflError("not a dfl-dsl checkpoint", filename=str(path))
    if found != expected:
        raise DflError(
            f"this checkpoint holds {CHECKPOINT_HOLDS[found]} (trained on "
            f"`{state.get('model_name')}`), but `{inst.model.name}` needs "
            f"{CHECKPOINT_HOLDS[expected]}",
            hint="give the checkpoint `dfl train --save` wrote for this model",
            filename=str(path),
        )
    check_fields(state, found, path)
    if state["model_hash"] != inst.model.hash:
        raise DflError(
            f"this checkpoint was trained on another model (`{state.get('model_name')}`, "
            f"hash {state['model_hash']}), not `{inst.model.name}` (hash {inst.model.hash})",
            filename=str(path),
        )
    return state


def check_checkpoint_size(path, inst, does: str, saved: int, unit: str, size: int) -> None:
    """Same model text, other instance data (more items, fewer assets): the checkpoint's
    network has another width, and torch would fail inside a matrix product."""
    if saved != size:
        raise DflError(f"this checkpoint's {does} {saved} {unit}; with this "
                       f"instance data `{inst.model.name}` has {size}",
                       hint="give the instance data it was trained with (--data)",
                       filename=str(path))


def entry_labels(inst, params=None) -> list[str]:
    """What each of a predictor's outputs (or a generative model's drawn values, `params`
    inst.uncertain) stands for (`value[7]`, `cost[w1, a]`), in order: saved with the
    weights, since outputs are matched to entries by position alone."""
    params = inst.predicted if params is None else params
    return [f"{e.name}{e.entry_label(k)}" for e in params for k in range(e.size)]


def check_entries(path, inst, saved, params=None,
                  what: str = "predictor output {k} predicts") -> None:
    """Same model, same sizes, but a set's elements in another order (or renamed) in the
    instance data: output k would be read as another entry's prediction, and the regret
    came out silently other (0.32 for 0.22, the items listed in reverse). Checkpoints written
    before the labels were saved (`saved` None) are not checked."""
    if saved is None:
        return
    here = entry_labels(inst, params)
    if not isinstance(saved, list) or not all(isinstance(x, str) for x in saved) or len(
            saved) != len(here):
        raise DflError(f"the checkpoint's `entries` is not a list of {len(here)} entry names",
                       filename=str(path))
    if saved == here:
        return
    k = next(i for i, (a, b) in enumerate(zip(saved, here, strict=True)) if a != b)
    order = " (the same entries in another order)" if sorted(saved) == sorted(here) else ""
    raise DflError(f"this checkpoint's {what.format(k=k)} `{saved[k]}`; with this "
                   f"instance data it would be read as `{here[k]}`{order}",
                   hint="give the instance data it was trained with, its sets' elements in "
                        "the same order", filename=str(path))


def load_checkpoint(path: str | Path, inst, predictor: nn.Module | None = None) -> nn.Module:
    """A predictor from a checkpoint; refuses one trained on another model."""
    state = read_checkpoint(path, inst, CHECKPOINT_FORMAT)
    spec = state["predictor"]
    check_checkpoint_size(path, inst, "predictor predicts", spec["n_outputs"], "values per sample",
                           sum(entity.size for entity in inst.predicted))
    check_entries(path, inst, state.get("entries"))
    if predictor is None and spec["kind"] == "custom":
        raise DflError("the checkpoint holds a custom predictor: pass the module to load it")
    make = (lambda: predictor) if predictor is not None else (
        lambda: make_predictor(spec["kind"], spec["n_features"], spec["n_outputs"],
                               spec["hidden"]))
    return rebuilt(make, state["state_dict"], "predictor", path).eval()
