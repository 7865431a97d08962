"""Assignment MILP in Pyomo."""

import pyomo.environ as pe
from _ampl import at, solve

OBJECTIVES = [None]


def reference(d, objective=None):
    W, J = d["WORKERS"], d["JOBS"]
    m = pe.ConcreteModel()
    m.x = pe.Var(W, J, within=pe.Binary)
    m.time = pe.Objective(expr=sum(at(d["time"], w, j) * m.x[w, j] for w in W for j in J))
    m.one_job = pe.Constraint(W, rule=lambda _, w: sum(m.x[w, j] for j in J) == 1)
    m.one_worker = pe.Constraint(J, rule=lambda _, j: sum(m.x[w, j] for w in W) == 1)
    return solve(m)
