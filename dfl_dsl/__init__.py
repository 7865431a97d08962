"""dfl-dsl: write an optimization problem once, solve it, and train predictors through it."""

from .errors import DflError
from .model import Model, load, parse

__all__ = ["DflError", "Model", "load", "parse"]
