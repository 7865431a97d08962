"""A batched LP solver in torch (CPU and CUDA): restarted PDHG with diagonal preconditioning,
then exact polishing and an optimality certificate per sample. It solves B LPs that share one
constraint pattern at once — what decision-focused learning asks of its oracle."""

from .operator import RowOperator
from .problem import BatchLP
from .solver import BatchResult, Settings, solve_batch

__all__ = ["BatchLP", "BatchResult", "RowOperator", "Settings", "solve_batch"]
