"""Shift-covering MILP in Pyomo (integer head counts per shift)."""

import pyomo.environ as pe
from _ampl import at, solve

OBJECTIVES = [None]


def reference(d, objective=None):
    m = pe.ConcreteModel()
    m.work = pe.Var(d["SHIFTS"], within=pe.NonNegativeIntegers, bounds=(0, d["maxstaff"]))
    m.pay = pe.Objective(expr=sum(at(d["wage"], s) * m.work[s] for s in d["SHIFTS"]))
    m.staffed = pe.Constraint(d["PERIODS"], rule=lambda _, p: sum(
        m.work[s] for s in at(d["COVER"], p)) >= at(d["need"], p))
    return solve(m)
