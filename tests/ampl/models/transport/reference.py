"""Transportation LP in Pyomo; `duals` gives the demand rows' prices for the --json test."""

import pyomo.environ as pe
from _ampl import at, solve, solve_result

OBJECTIVES = [None]


def build(d):
    src, D = d["ORIG"], d["DEST"]
    m = pe.ConcreteModel()
    m.x = pe.Var(src, D, within=pe.NonNegativeReals)
    m.cost = pe.Objective(expr=sum(at(d["cost"], i, j) * m.x[i, j] for i in src for j in D))
    m.supply = pe.Constraint(src, rule=lambda _, i: sum(m.x[i, j] for j in D) <= at(d["supply"], i))
    m.demand = pe.Constraint(D, rule=lambda _, j: sum(m.x[i, j] for i in src) == at(d["demand"], j))
    return m


def reference(d, objective=None):
    return solve(build(d))


def duals(d):
    """The optimum and the prices of the supply and demand rows, keyed by element."""
    m = build(d)
    result = solve_result(m)
    y = result.solution_loader.get_duals()
    return result.incumbent_objective, {
        "Supply": {i: y[m.supply[i]] for i in d["ORIG"]},
        "Demand": {j: y[m.demand[j]] for j in d["DEST"]}}
