"""Set multi-cover MILP in Pyomo (coverage need 1 unless the data says otherwise)."""

import pyomo.environ as pe
from _ampl import at, get, solve

OBJECTIVES = [None]


def reference(d, objective=None):
    S = d["STATIONS"]
    m = pe.ConcreteModel()
    m.build = pe.Var(S, within=pe.Binary)
    m.total = pe.Objective(expr=sum(at(d["cost"], s) * m.build[s] for s in S))
    m.covered = pe.Constraint(d["DISTRICTS"], rule=lambda _, k: sum(
        m.build[s] for s in S if k in at(d["REACH"], s)) >= get(d["need"], 1, k))
    return solve(m)
