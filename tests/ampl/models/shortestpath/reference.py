"""Shortest path in Pyomo as a unit flow (the LP's optimum is the path length)."""

import pyomo.environ as pe
from _ampl import at, solve

OBJECTIVES = [None]


def reference(d, objective=None):
    arcs = [tuple(a) for a in d["ARCS"]]
    m = pe.ConcreteModel()
    m.use = pe.Var(arcs, bounds=(0, 1))
    m.length = pe.Objective(expr=sum(at(d["len"], i, j) * m.use[i, j] for i, j in arcs))

    def rhs(k):
        return 1 if k == d["orig"] else -1 if k == d["dest"] else 0

    m.flow = pe.Constraint(d["NODES"], rule=lambda _, k: sum(
        m.use[a] for a in arcs if a[0] == k) - sum(m.use[a] for a in arcs if a[1] == k) == rhs(k))
    return solve(m)
