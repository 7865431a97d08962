"""A workshop LP with three objectives in Pyomo; `objective` picks one (None: the first)."""

import pyomo.environ as pe
from _ampl import at, get, solve

OBJECTIVES = [None, "Total_Profit", "Overtime", "Leftover"]


def reference(d, objective=None):
    P, M = d["PRODUCTS"], d["MACHINES"]
    m = pe.ConcreteModel()
    m.make = pe.Var(P, bounds=lambda _, p: (get(d["min_make"], 0, p), at(d["max_make"], p)))
    m.over = pe.Var(M, bounds=lambda _, k: (0, at(d["overtime_max"], k)))
    used = sum(at(d["material"], p) * m.make[p] for p in P)
    objectives = {
        "Total_Profit": (pe.maximize, sum(at(d["profit"], p) * m.make[p] for p in P)
                         - 30 * sum(m.over[k] for k in M)),
        "Overtime": (pe.minimize, sum(m.over[k] for k in M)),
        "Leftover": (pe.minimize, d["material_avail"] - used),
    }
    sense, expr = objectives[objective or "Total_Profit"]
    m.obj = pe.Objective(sense=sense, expr=expr)
    m.capacity = pe.Constraint(M, rule=lambda _, k: sum(
        at(d["hours"], k, p) * m.make[p] for p in P) <= at(d["regular"], k) + m.over[k])
    m.material = pe.Constraint(expr=used <= d["material_avail"])
    return solve(m)
