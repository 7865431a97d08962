"""Static checking: names, types, shapes, curvature, and the model class."""

from .checker import Checker
from .classify import ModelClass, classify
from .info import Curv, Info, Sign

__all__ = ["Checker", "Curv", "Info", "ModelClass", "Sign", "classify"]
