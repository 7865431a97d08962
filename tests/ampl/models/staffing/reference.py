"""Workforce LP in Pyomo: permanent staff roll-over, 3-week temporary contracts, slow shrink."""

import pyomo.environ as pe
from _ampl import at, solve

OBJECTIVES = [None]


def reference(d, objective=None):
    W = d["WEEKS"]
    n = len(W)
    m = pe.ConcreteModel()
    for name in ("staff", "hire", "fire", "temp"):
        setattr(m, name, pe.Var(range(n), within=pe.NonNegativeReals))
    m.cost = pe.Objective(expr=sum(d["wage"] * m.staff[k] + d["hire_cost"] * m.hire[k]
                                   + d["fire_cost"] * m.fire[k] + d["temp_cost"] * m.temp[k]
                                   for k in range(n)))
    m.roll = pe.Constraint(range(n), rule=lambda _, k: m.staff[k] == (
        m.staff[k - 1] if k else d["staff0"]) + m.hire[k] - m.fire[k])
    m.cover = pe.Constraint(range(n), rule=lambda _, k: m.staff[k] + sum(
        m.temp[u] for u in range(max(0, k - 2), k + 1)) >= at(d["need"], W[k]))
    m.shrink = pe.Constraint(range(n - 2), rule=lambda _, k:
                             m.staff[k + 2] >= (1 - d["shrink"]) * m.staff[k])
    m.late = pe.Constraint([n - 2, n - 1], rule=lambda _, k: m.temp[k] <= at(d["need"], W[k]))
    return solve(m)
