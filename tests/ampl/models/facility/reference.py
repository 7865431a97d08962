"""Capacitated facility location MILP in Pyomo (fractional service, binary sites)."""

import pyomo.environ as pe
from _ampl import at, get, solve

OBJECTIVES = [None]


def reference(d, objective=None):
    S, C = d["SITES"], d["CUST"]
    m = pe.ConcreteModel()
    m.open = pe.Var(S, within=pe.Binary)
    m.serve = pe.Var(S, C, bounds=(0, 1))
    m.cost = pe.Objective(expr=sum(
        (1 - get(d["is_open"], 0, i)) * at(d["fixed"], i) * m.open[i] for i in S)
        + sum(at(d["ship"], i, j) * m.serve[i, j] for i in S for j in C))
    m.assign = pe.Constraint(C, rule=lambda _, j: sum(m.serve[i, j] for i in S) == 1)
    m.capacity = pe.Constraint(S, rule=lambda _, i: sum(
        at(d["demand"], j) * m.serve[i, j] for j in C) <= at(d["capacity"], i) * m.open[i])
    m.link = pe.Constraint(S, C, rule=lambda _, i, j: m.serve[i, j] <= m.open[i])
    return solve(m)
