"""Longest path in a DAG as a unit-flow LP in Pyomo, with a bonus on k -> k+1 steps."""

import pyomo.environ as pe
from _ampl import at, get, solve

OBJECTIVES = [None]


def reference(d, objective=None):
    n = d["n"]
    arcs = [tuple(a) for a in d["ARCS"]]
    m = pe.ConcreteModel()
    m.take = pe.Var(arcs, bounds=(0, 1))
    m.length = pe.Objective(sense=pe.maximize, expr=sum(
        (at(d["dur"], i, j) + (get(d["bonus"], 0, i) if j == i + 1 else 0)) * m.take[i, j]
        for i, j in arcs))
    m.start = pe.Constraint(expr=sum(m.take[a] for a in arcs if a[0] == 1) == 1)
    m.finish = pe.Constraint(expr=sum(m.take[a] for a in arcs if a[1] == n) == 1)
    m.pass_ = pe.Constraint(range(2, n), rule=lambda _, k: sum(
        m.take[a] for a in arcs if a[1] == k) == sum(m.take[a] for a in arcs if a[0] == k))
    return solve(m)
