"""Multi-period transportation LP with destination storage in Pyomo."""

import pyomo.environ as pe
from _ampl import at, get, solve

OBJECTIVES = [None]


def reference(d, objective=None):
    src, dst, T = d["ORIG"], d["DEST"], d["T"]
    P = range(1, T + 1)
    m = pe.ConcreteModel()
    m.ship = pe.Var(src, dst, P, within=pe.NonNegativeReals)
    m.stock = pe.Var(dst, range(T + 1), bounds=lambda _, j, t: (0, get(d["store"], None, j)))
    m.cost = pe.Objective(expr=sum(at(d["cost"], i, j, t) * m.ship[i, j, t]
                                   for i in src for j in dst for t in P)
                          + sum(at(d["hold"], j) * m.stock[j, t] for j in dst for t in P))
    m.empty = pe.Constraint(dst, rule=lambda _, j: m.stock[j, 0] == 0)
    m.supply = pe.Constraint(src, P, rule=lambda _, i, t: sum(
        m.ship[i, j, t] for j in dst) <= at(d["supply"], i, t))
    m.balance = pe.Constraint(dst, P, rule=lambda _, j, t: m.stock[j, t - 1] + sum(
        m.ship[i, j, t] for i in src) == at(d["demand"], j, t) + m.stock[j, t])
    return solve(m)
