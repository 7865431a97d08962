"""Project selection MILP in Pyomo: prerequisites, conflicts, a budget per year."""

import pyomo.environ as pe
from _ampl import at, get, solve

OBJECTIVES = [None]


def reference(d, objective=None):
    P = d["PROJECTS"]
    needs = [(p, q) for p in P for q in d["PREREQ"].get(p, [])]
    m = pe.ConcreteModel()
    m.do = pe.Var(P, within=pe.Binary)
    m.value = pe.Objective(sense=pe.maximize, expr=sum(at(d["value"], p) * m.do[p] for p in P))
    m.needs = pe.Constraint(needs, rule=lambda _, p, q: m.do[p] <= m.do[q])
    m.excl = pe.Constraint([tuple(c) for c in d["CONFLICTS"]],
                           rule=lambda _, p, q: m.do[p] + m.do[q] <= 1)
    m.budget = pe.Constraint([1, 2], rule=lambda _, y: sum(
        get(d["spend"], 0, p, y) * m.do[p] for p in P) <= at(d["budget"], y))
    return solve(m)
