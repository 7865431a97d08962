"""Synthetic data sets that reproduce PyEPO's formulas and seeds (same arrays for the same
arguments), plus the instance data of each problem in this project's format."""

from .pyepo_compatible import knapsack, portfolio, shortest_path

GENERATORS = {"shortest_path": shortest_path, "knapsack": knapsack, "portfolio": portfolio}

__all__ = ["GENERATORS", "knapsack", "portfolio", "shortest_path"]
