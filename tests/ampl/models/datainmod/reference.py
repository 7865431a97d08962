"""Bakery LP in Pyomo (resource use left out of the data is 0)."""

import pyomo.environ as pe
from _ampl import at, get, solve

OBJECTIVES = [None]


def reference(d, objective=None):
    G = d["GOODS"]
    m = pe.ConcreteModel()
    m.bake = pe.Var(G, bounds=lambda _, g: (0, at(d["max_sale"], g)))
    m.revenue = pe.Objective(sense=pe.maximize, expr=sum(at(d["price"], g) * m.bake[g] for g in G))
    m.limit = pe.Constraint(d["RESOURCES"], rule=lambda _, r: sum(
        get(d["use"], 0, r, g) * m.bake[g] for g in G) <= at(d["cap"], r))
    return solve(m)
