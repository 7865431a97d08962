"""Purchasing-and-storage LP in Pyomo over ordered months (audit month by position)."""

import pyomo.environ as pe
from _ampl import at, get, solve

OBJECTIVES = [None]


def reference(d, objective=None):
    M = d["MONTHS"]
    m = pe.ConcreteModel()
    m.buy = pe.Var(M, bounds=lambda _, t: (0, get(d["buy_cap"], 200, t)))
    m.stock = pe.Var(M, bounds=(0, d["store_cap"]))
    m.cost = pe.Objective(expr=sum(at(d["price"], t) * m.buy[t] + d["hold"] * m.stock[t]
                                   for t in M))
    m.balance = pe.Constraint(range(len(M)), rule=lambda _, k: m.stock[M[k]] == (
        m.stock[M[k - 1]] if k else d["start_stock"]) + m.buy[M[k]] - at(d["demand"], M[k]))
    m.safety = pe.Constraint(expr=m.stock[M[-1]] >= d["end_stock"])
    m.audit = pe.Constraint(expr=m.stock[M[d["audit"] - 1]] >= d["audit_stock"])
    return solve(m)
