"""Unit commitment MILP in Pyomo: on/off, start-ups, limits, spinning reserve, ramping."""

import pyomo.environ as pe
from _ampl import at, get, solve

OBJECTIVES = [None]


def reference(d, objective=None):
    G, H = d["UNITS"], d["HOURS"]
    m = pe.ConcreteModel()
    m.on = pe.Var(G, H, within=pe.Binary)
    m.start = pe.Var(G, H, within=pe.Binary)
    m.p = pe.Var(G, H, within=pe.NonNegativeReals)
    m.cost = pe.Objective(expr=sum(
        at(d["mcost"], g) * m.p[g, t] + at(d["noload"], g) * m.on[g, t]
        + at(d["startup"], g) * m.start[g, t] for g in G for t in H))
    m.demand = pe.Constraint(H, rule=lambda _, t: sum(m.p[g, t] for g in G) == at(d["demand"], t))
    m.spin = pe.Constraint(H, rule=lambda _, t: sum(at(d["pmax"], g) * m.on[g, t] for g in G)
                           >= (1 + d["reserve"]) * at(d["demand"], t))
    m.lo = pe.Constraint(G, H, rule=lambda _, g, t: m.p[g, t] >= at(d["pmin"], g) * m.on[g, t])
    m.hi = pe.Constraint(G, H, rule=lambda _, g, t: m.p[g, t] <= at(d["pmax"], g) * m.on[g, t])
    before_on = {(g, t): (m.on[g, H[k - 1]] if k else get(d["on0"], 0, g))
                 for g in G for k, t in enumerate(H)}
    before_p = {(g, t): (m.p[g, H[k - 1]] if k else get(d["p0"], 0, g))
                for g in G for k, t in enumerate(H)}
    m.startc = pe.Constraint(G, H, rule=lambda _, g, t:
                             m.start[g, t] >= m.on[g, t] - before_on[g, t])
    m.ramp = pe.Constraint(G, H, rule=lambda _, g, t:
                           m.p[g, t] - before_p[g, t] <= at(d["ramp"], g))
    return solve(m)
