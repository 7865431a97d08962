"""Markowitz QP in Pyomo: min w' C w, sum w = 1, mu'w >= target, 0 <= w <= cap."""

import pyomo.environ as pe
from _ampl import at, get, solve

OBJECTIVES = [None]


def reference(d, objective=None):
    A = d["ASSETS"]
    m = pe.ConcreteModel()
    m.w = pe.Var(A, bounds=lambda _, a: (0, get(d["cap"], 1, a)))
    m.var = pe.Objective(expr=sum(at(d["cov"], i, j) * m.w[i] * m.w[j] for i in A for j in A))
    m.budget = pe.Constraint(expr=sum(m.w[a] for a in A) == 1)
    m.ret = pe.Constraint(expr=sum(at(d["mu"], a) * m.w[a] for a in A) >= d["target"])
    return solve(m)
