"""dfl-dsl: write an optimization problem once, solve it, and train predictors through it."""

from .errors import DflError
from .model import Model, load, parse

__all__ = ["DflError", "Model", "load", "losses", "parse"]


def __getattr__(name: str):
    """`dfl.losses` is imported on first use (it pulls in torch, which the CLI's `check` and
    `solve` don't need)."""
    if name == "losses":
        from .learn import losses

        return losses
    raise AttributeError(f"module 'dfl_dsl' has no attribute {name!r}")
