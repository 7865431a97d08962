"""Blending LP in Pyomo: property averages within the bounds the data gives."""

import pyomo.environ as pe
from _ampl import at, get, solve

OBJECTIVES = [None]


def reference(d, objective=None):
    oils, n = d["OILS"], d["amount"]
    m = pe.ConcreteModel()
    m.use = pe.Var(oils, bounds=lambda _, o: (0, get(d["stock"], None, o)))
    m.cost = pe.Objective(expr=sum(at(d["price"], o) * m.use[o] for o in oils))
    m.total = pe.Constraint(expr=sum(m.use[o] for o in oils) == n)
    m.low = pe.Constraint(list(d["lo"]), rule=lambda _, p: sum(
        at(d["content"], o, p) * m.use[o] for o in oils) >= at(d["lo"], p) * n)
    m.high = pe.Constraint(list(d["hi"]), rule=lambda _, p: sum(
        at(d["content"], o, p) * m.use[o] for o in oils) <= at(d["hi"], p) * n)
    return solve(m)
