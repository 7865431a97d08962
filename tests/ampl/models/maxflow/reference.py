"""Max-flow LP in Pyomo: maximize the flow out of s, conserved at every other node but t."""

import pyomo.environ as pe
from _ampl import at, solve

OBJECTIVES = [None]


def reference(d, objective=None):
    arcs = [tuple(a) for a in d["ARCS"]]
    s, t = d["s"], d["t"]
    m = pe.ConcreteModel()
    m.f = pe.Var(arcs, bounds=lambda _, i, j: (0, at(d["cap"], i, j)))
    m.flow = pe.Objective(sense=pe.maximize, expr=sum(m.f[a] for a in arcs if a[0] == s))
    inner = [k for k in d["NODES"] if k not in (s, t)]
    m.conserve = pe.Constraint(inner, rule=lambda _, k: sum(
        m.f[a] for a in arcs if a[1] == k) == sum(m.f[a] for a in arcs if a[0] == k))
    return solve(m)
