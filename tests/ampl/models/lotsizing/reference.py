"""Uncapacitated lot-sizing MILP in Pyomo (big-M = the demand still to come)."""

import pyomo.environ as pe
from _ampl import at, solve

OBJECTIVES = [None]


def reference(d, objective=None):
    T = d["PERIODS"]
    dem = [at(d["demand"], t) for t in T]
    m = pe.ConcreteModel()
    m.make = pe.Var(T, within=pe.NonNegativeReals)
    m.setup = pe.Var(T, within=pe.Binary)
    m.stock = pe.Var(T, within=pe.NonNegativeReals)
    m.cost = pe.Objective(expr=sum(at(d["setup_cost"], t) * m.setup[t] + at(d["unit_cost"], t)
                                   * m.make[t] + d["hold_cost"] * m.stock[t] for t in T))
    m.balance = pe.Constraint(range(len(T)), rule=lambda _, k: m.stock[T[k]] == (
        m.stock[T[k - 1]] if k else d["inv0"]) + m.make[T[k]] - dem[k])
    m.only = pe.Constraint(range(len(T)), rule=lambda _, k:
                           m.make[T[k]] <= sum(dem[k:]) * m.setup[T[k]])
    return solve(m)
