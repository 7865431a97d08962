"""Deep FlexQP: an always-feasible, batched, differentiable QP solver in torch (Alcalde et al.,
ICLR 2026, arXiv 2512.01565). `admm` solves the exact L1 relaxation, `policy` sets its
parameters, `train` fits the policy by unrolling, `layer` differentiates the solution, `backend`
is `dfl solve --backend flexqp`."""

from .admm import solve
from .backend import solve_instance
from .iterates import Result, Settings
from .policy import DeepPolicy, default_policy
from .problem import QPBatch

__all__ = ["DeepPolicy", "QPBatch", "Result", "Settings", "default_policy", "solve",
           "solve_instance"]
