"""Regional supply LP in Pyomo: a fee where regions differ, a share from the hub region."""

import pyomo.environ as pe
from _ampl import at, solve

OBJECTIVES = [None]


def reference(d, objective=None):
    W, S = d["WAREHOUSES"], d["STORES"]
    fee = {(w, s): d["cross_fee"] if at(d["w_region"], w) != at(d["s_region"], s) else 0
           for w in W for s in S}
    m = pe.ConcreteModel()
    m.x = pe.Var(W, S, within=pe.NonNegativeReals)
    m.cost = pe.Objective(expr=sum((at(d["base"], w, s) + fee[w, s]) * m.x[w, s]
                                   for w in W for s in S))
    m.stock = pe.Constraint(W, rule=lambda _, w: sum(m.x[w, s] for s in S) <= at(d["stock"], w))
    m.demand = pe.Constraint(S, rule=lambda _, s: sum(m.x[w, s] for w in W) >= at(d["demand"], s))
    m.hub = pe.Constraint(expr=sum(m.x[w, s] for w in W for s in S
                                   if at(d["w_region"], w) == d["hub"])
                          >= d["hub_share"] * sum(at(d["demand"], s) for s in S))
    return solve(m)
