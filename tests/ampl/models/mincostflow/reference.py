"""Min-cost flow LP in Pyomo; capacities left out of the data are unbounded."""

import pyomo.environ as pe
from _ampl import at, get, solve

OBJECTIVES = [None]


def reference(d, objective=None):
    arcs = [tuple(a) for a in d["ARCS"]]
    m = pe.ConcreteModel()
    m.f = pe.Var(arcs, bounds=lambda _, i, j: (0, get(d["cap"], None, i, j)))
    m.cost = pe.Objective(expr=sum(at(d["cost"], i, j) * m.f[i, j] for i, j in arcs))
    m.balance = pe.Constraint(d["NODES"], rule=lambda _, n: sum(
        m.f[a] for a in arcs if a[0] == n) - sum(m.f[a] for a in arcs if a[1] == n)
        == get(d["b"], 0, n))
    return solve(m)
