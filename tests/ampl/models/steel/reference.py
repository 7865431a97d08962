"""Multi-period production LP in Pyomo (inventory balance per product and week)."""

import pyomo.environ as pe
from _ampl import at, solve

OBJECTIVES = [None]


def reference(d, objective=None):
    P, T = d["PROD"], d["T"]
    W = range(1, T + 1)
    m = pe.ConcreteModel()
    m.make = pe.Var(P, W, within=pe.NonNegativeReals)
    m.inv = pe.Var(P, range(T + 1), within=pe.NonNegativeReals)
    m.sell = pe.Var(P, W, bounds=lambda _, p, t: (0, at(d["market"], p, t)))
    m.profit = pe.Objective(sense=pe.maximize, expr=sum(
        at(d["revenue"], p, t) * m.sell[p, t] - at(d["prodcost"], p) * m.make[p, t]
        - at(d["invcost"], p) * m.inv[p, t] for p in P for t in W))
    m.time = pe.Constraint(W, rule=lambda _, t: sum(
        m.make[p, t] / at(d["rate"], p) for p in P) <= at(d["avail"], t))
    m.init = pe.Constraint(P, rule=lambda _, p: m.inv[p, 0] == at(d["inv0"], p))
    m.balance = pe.Constraint(P, W, rule=lambda _, p, t:
                              m.make[p, t] + m.inv[p, t - 1] == m.sell[p, t] + m.inv[p, t])
    return solve(m)
