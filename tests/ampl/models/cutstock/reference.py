"""Cutting-stock MILP over fixed patterns in Pyomo (entries left out are 0)."""

import pyomo.environ as pe
from _ampl import at, get, solve

OBJECTIVES = [None]


def reference(d, objective=None):
    pats = range(1, d["nPAT"] + 1)
    m = pe.ConcreteModel()
    m.cut = pe.Var(pats, within=pe.NonNegativeIntegers)
    m.number = pe.Objective(expr=sum(m.cut[j] for j in pats))
    m.fill = pe.Constraint(d["WIDTHS"], rule=lambda _, w: sum(
        get(d["rolls"], 0, w, j) * m.cut[j] for j in pats) >= at(d["orders"], w))
    return solve(m)
