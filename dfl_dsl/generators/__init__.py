"""Synthetic data sets: PyEPO's benchmarks with its formulas and seeds (same arrays for the same
arguments), and the Gen-DFL tasks with scenario draws; each with the instance data of its
problem in this project's format."""

from .energy import energy
from .portfolio_cvar import portfolio_cvar
from .pyepo_compatible import knapsack, portfolio, shortest_path
from .shortest_path_cvar import shortest_path_cvar

GENERATORS = {"shortest_path": shortest_path, "knapsack": knapsack, "portfolio": portfolio,
              "energy": energy, "portfolio_cvar": portfolio_cvar,
              "shortest_path_cvar": shortest_path_cvar}

__all__ = ["GENERATORS", "energy", "knapsack", "portfolio", "portfolio_cvar", "shortest_path",
           "shortest_path_cvar"]
