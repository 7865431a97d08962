"""Fixed-charge multi-commodity transportation MILP in Pyomo over sparse routes."""

import pyomo.environ as pe
from _ampl import at, solve

OBJECTIVES = [None]


def reference(d, objective=None):
    routes = [tuple(r) for r in d["ROUTES"]]
    lanes = list(dict.fromkeys((i, j) for i, j, _ in routes))
    m = pe.ConcreteModel()
    m.x = pe.Var(routes, within=pe.NonNegativeReals)
    m.use = pe.Var(lanes, within=pe.Binary)
    m.cost = pe.Objective(expr=sum(at(d["vcost"], *r) * m.x[r] for r in routes)
                          + sum(at(d["fcost"], *lane) * m.use[lane] for lane in lanes))
    m.supply = pe.Constraint(d["ORIG"], d["PROD"], rule=lambda _, i, p: sum(
        m.x[r] for r in routes if r[0] == i and r[2] == p) == at(d["supply"], i, p))
    m.demand = pe.Constraint(d["DEST"], d["PROD"], rule=lambda _, j, p: sum(
        m.x[r] for r in routes if r[1] == j and r[2] == p) == at(d["demand"], j, p))
    m.multi = pe.Constraint(lanes, rule=lambda _, i, j: sum(
        m.x[r] for r in routes if r[:2] == (i, j)) <= at(d["limit"], i, j) * m.use[i, j])
    return solve(m)
