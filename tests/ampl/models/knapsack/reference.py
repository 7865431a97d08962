"""Bounded knapsack MILP in Pyomo (volume defaults to 1, availability to 10)."""

import pyomo.environ as pe
from _ampl import at, get, solve

OBJECTIVES = [None]


def reference(d, objective=None):
    items = d["ITEMS"]
    m = pe.ConcreteModel()
    m.take = pe.Var(items, within=pe.NonNegativeIntegers,
                    bounds=lambda _, i: (0, get(d["avail"], 10, i)))
    m.value = pe.Objective(sense=pe.maximize,
                           expr=sum(at(d["value"], i) * m.take[i] for i in items))
    m.weight = pe.Constraint(expr=sum(at(d["weight"], i) * m.take[i] for i in items)
                             <= d["max_weight"])
    m.volume = pe.Constraint(expr=sum(get(d["volume"], 1, i) * m.take[i] for i in items)
                             <= d["max_volume"])
    return solve(m)
