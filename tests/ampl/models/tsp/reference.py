"""TSP (MTZ) MILP in Pyomo over Euclidean distances."""

import math

import pyomo.environ as pe
from _ampl import at, solve

OBJECTIVES = [None]


def reference(d, objective=None):
    C = d["CITIES"]
    n = len(C)
    links = [(i, j) for i in C for j in C if i != j]
    dist = {(i, j): math.hypot(at(d["x"], i) - at(d["x"], j), at(d["y"], i) - at(d["y"], j))
            for i, j in links}
    m = pe.ConcreteModel()
    m.go = pe.Var(links, within=pe.Binary)
    m.order = pe.Var(C, bounds=(0, n - 1))
    m.tour = pe.Objective(expr=sum(dist[a] * m.go[a] for a in links))
    m.leave = pe.Constraint(C, rule=lambda _, i: sum(m.go[i, j] for j in C if j != i) == 1)
    m.enter = pe.Constraint(C, rule=lambda _, j: sum(m.go[i, j] for i in C if i != j) == 1)
    m.home = pe.Constraint(expr=m.order[C[0]] == 0)
    m.mtz = pe.Constraint([a for a in links if a[1] != C[0]], rule=lambda _, i, j:
                          m.order[j] >= m.order[i] + 1 - n * (1 - m.go[i, j]))
    return solve(m)
