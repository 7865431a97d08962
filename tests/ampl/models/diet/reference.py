"""Diet LP in Pyomo: min c'x, n_min <= A x <= n_max, f_min <= x <= f_max."""

import pyomo.environ as pe
from _ampl import at, get, solve

OBJECTIVES = [None]


def reference(d, objective=None):
    m = pe.ConcreteModel()
    foods, nutrs = d["FOOD"], d["NUTR"]
    m.buy = pe.Var(foods, bounds=lambda _, j: (get(d["f_min"], 0, j), at(d["f_max"], j)))
    m.cost = pe.Objective(expr=sum(at(d["cost"], j) * m.buy[j] for j in foods))
    m.diet = pe.Constraint(nutrs, rule=lambda _, i: pe.inequality(
        at(d["n_min"], i), sum(at(d["amt"], i, j) * m.buy[j] for j in foods), at(d["n_max"], i)))
    return solve(m)
