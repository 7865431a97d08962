"""Predictors from features to the model's predicted params."""

from __future__ import annotations

from torch import nn

PREDICTORS = ("linear", "mlp")


def make_predictor(kind: str, n_features: int, n_outputs: int, hidden: int = 64) -> nn.Module:
    """`linear` (PyEPO's standard) or `mlp` (two hidden ReLU layers)."""
    if kind == "linear":
        return nn.Linear(n_features, n_outputs)
    if kind == "mlp":
        return nn.Sequential(
            nn.Linear(n_features, hidden), nn.ReLU(),
            nn.Linear(hidden, hidden), nn.ReLU(),
            nn.Linear(hidden, n_outputs),
        )
    raise ValueError(f"unknown predictor `{kind}` (use linear or mlp)")


def describe(kind: str, n_features: int, n_outputs: int, hidden: int = 64) -> dict:
    """What a checkpoint stores to rebuild the predictor (plain types only)."""
    return {"kind": kind, "n_features": n_features, "n_outputs": n_outputs, "hidden": hidden}
