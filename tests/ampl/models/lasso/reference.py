"""Lasso in Pyomo as a QP: |b_j| through epigraph variables t_j >= +-b_j."""

import pyomo.environ as pe
from _ampl import at, solve

OBJECTIVES = [None]
BACKENDS = ["highs", "pyomo"]   # the QP must stay a QP on both


def reference(d, objective=None):
    F, obs = d["FEAT"], d["OBS"]
    m = pe.ConcreteModel()
    m.b = pe.Var(F)
    m.t = pe.Var(F, within=pe.NonNegativeReals)
    m.r = pe.Var(obs)
    m.fit = pe.Objective(expr=sum(m.r[i] ** 2 for i in obs) + d["lam"] * sum(m.t[j] for j in F))
    m.res = pe.Constraint(obs, rule=lambda _, i: m.r[i] == at(d["y"], i) - sum(
        at(d["X"], i, j) * m.b[j] for j in F))
    m.up = pe.Constraint(F, rule=lambda _, j: m.t[j] >= m.b[j])
    m.down = pe.Constraint(F, rule=lambda _, j: m.t[j] >= -m.b[j])
    return solve(m)
