"""The peers of benchmarks/build_speed.py, each building the same model its usual way:
Pyomo (a ConcreteModel handed to appsi's HiGHS), CVXPY (up to CVXPY's own HiGHS hand-over),
linopy (labeled arrays, handed to HiGHS through its direct interface) and the hand-written
highspy floor. Each `PEER(family, size, solve)` returns a `run()` giving (laps, objective).
"""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp
from _common import Stopwatch, transport_arrays, transport_names

M_BIG = 2 * math.sqrt(2)  # the paper's big-M


def facility_grid(G: int) -> tuple[np.ndarray, np.ndarray]:
    """Customer coordinates, customer p = i (G+1) + j at (i/G, j/G)."""
    return np.repeat(np.arange(G + 1), G + 1) / G, np.tile(np.arange(G + 1), G + 1) / G



# ====================================================================== Pyomo
def pyomo(family: str, size: int, solve: bool):
    import pyomo.environ as pyo
    from pyomo.contrib.appsi.solvers import Highs

    if family == "transport":
        supply, demand, cost = transport_arrays(size)
        orig, dest = transport_names(size)
        supply_d = dict(zip(orig, supply.tolist(), strict=True))
        demand_d = dict(zip(dest, demand.tolist(), strict=True))
        cost_d = {(o, d): c for o, row in zip(orig, cost.tolist(), strict=True)
                  for d, c in zip(dest, row, strict=True)}

        def build():
            m = pyo.ConcreteModel()
            m.ORIG = pyo.Set(initialize=orig)
            m.DEST = pyo.Set(initialize=dest)
            m.supply = pyo.Param(m.ORIG, initialize=supply_d)
            m.demand = pyo.Param(m.DEST, initialize=demand_d)
            m.cost = pyo.Param(m.ORIG, m.DEST, initialize=cost_d)
            m.ship = pyo.Var(m.ORIG, m.DEST, within=pyo.NonNegativeReals)
            m.total_cost = pyo.Objective(expr=pyo.quicksum(
                m.cost[i, j] * m.ship[i, j] for i in m.ORIG for j in m.DEST))
            m.supply_limit = pyo.Constraint(m.ORIG, rule=lambda m, i: pyo.quicksum(
                m.ship[i, j] for j in m.DEST) <= m.supply[i])
            m.meet_demand = pyo.Constraint(m.DEST, rule=lambda m, j: pyo.quicksum(
                m.ship[i, j] for i in m.ORIG) >= m.demand[j])
            return m
    else:
        G = F = size

        def build():
            m = pyo.ConcreteModel()
            m.GRID = pyo.RangeSet(0, G)
            m.FACS = pyo.RangeSet(1, F)
            m.DIMS = pyo.RangeSet(1, 2)
            m.y = pyo.Var(m.FACS, m.DIMS, bounds=(0, 1))
            m.s = pyo.Var(m.GRID, m.GRID, m.FACS, within=pyo.NonNegativeReals)
            m.z = pyo.Var(m.GRID, m.GRID, m.FACS, within=pyo.Binary)
            m.r = pyo.Var(m.GRID, m.GRID, m.FACS, m.DIMS)
            m.d = pyo.Var()
            m.max_distance = pyo.Objective(expr=m.d)
            m.assign = pyo.Constraint(m.GRID, m.GRID, rule=lambda m, i, j: pyo.quicksum(
                m.z[i, j, f] for f in m.FACS) == 1)
            m.budget = pyo.Constraint(m.GRID, m.GRID, m.FACS, rule=lambda m, i, j, f:
                                      m.s[i, j, f] == m.d + M_BIG * (1 - m.z[i, j, f]))
            m.offset_x = pyo.Constraint(m.GRID, m.GRID, m.FACS, rule=lambda m, i, j, f:
                                        m.r[i, j, f, 1] == i / G - m.y[f, 1])
            m.offset_y = pyo.Constraint(m.GRID, m.GRID, m.FACS, rule=lambda m, i, j, f:
                                        m.r[i, j, f, 2] == j / G - m.y[f, 2])
            m.dist_hi = pyo.Constraint(m.GRID, m.GRID, m.FACS, m.DIMS, rule=lambda m, i, j, f, k:
                                       m.r[i, j, f, k] <= m.s[i, j, f])
            m.dist_lo = pyo.Constraint(m.GRID, m.GRID, m.FACS, m.DIMS, rule=lambda m, i, j, f, k:
                                       -m.r[i, j, f, k] <= m.s[i, j, f])
            return m

    def run():
        watch = Stopwatch()
        m = build()
        watch.lap("build")
        opt = Highs()
        opt.set_instance(m)
        watch.lap("hand-over")
        objective = None
        if solve:
            # the model is already in HiGHS: don't let solve() re-scan it for changes
            for flag in ("check_for_new_or_removed_constraints", "check_for_new_or_removed_vars",
                         "check_for_new_or_removed_params", "check_for_new_objective",
                         "update_constraints", "update_vars", "update_params",
                         "update_named_expressions", "update_objective"):
                setattr(opt.update_config, flag, False)
            res = opt.solve(m)
            watch.lap("solve")
            objective = res.best_feasible_objective
        return watch.laps, objective

    return run


# ====================================================================== CVXPY
class _HandedOver(Exception):
    """Raised in place of Highs.run(): CVXPY's interface has passed the model by then."""


def _cvxpy_handover(solver, data):
    """CVXPY's own HiGHS interface up to its run() call; the loaded Highs object."""
    import highspy

    loaded = {}

    def stop(self):
        loaded["highs"] = self
        raise _HandedOver

    original = highspy.Highs.run
    highspy.Highs.run = stop
    try:
        solver.solve_via_data(data, False, False, {})
    except _HandedOver:
        pass
    finally:
        highspy.Highs.run = original
    return loaded["highs"]


def cvxpy(family: str, size: int, solve: bool):
    import cvxpy as cp

    if family == "transport":
        supply, demand, cost = transport_arrays(size)

        def build():
            ship = cp.Variable((size, size), nonneg=True)
            return cp.Problem(cp.Minimize(cp.sum(cp.multiply(cost, ship))), [
                cp.sum(ship, axis=1) <= supply,
                cp.sum(ship, axis=0) >= demand,
            ])
    else:
        G = F = size
        P = (G + 1) ** 2
        gx, gy = facility_grid(G)

        def build():
            y = cp.Variable((F, 2), bounds=[0, 1])
            s = cp.Variable((P, F), nonneg=True)
            z = cp.Variable((P, F), boolean=True)
            r1, r2 = cp.Variable((P, F)), cp.Variable((P, F))
            d = cp.Variable()
            return cp.Problem(cp.Minimize(d), [
                cp.sum(z, axis=1) == 1,
                s == d + M_BIG * (1 - z),
                r1 == gx[:, None] - cp.reshape(y[:, 0], (1, F), order="C"),
                r2 == gy[:, None] - cp.reshape(y[:, 1], (1, F), order="C"),
                r1 <= s, -r1 <= s, r2 <= s, -r2 <= s,
            ])

    def run():
        watch = Stopwatch()
        problem = build()
        watch.lap("build")
        data, chain, _ = problem.get_problem_data(cp.HIGHS)
        watch.lap("canonicalize")
        highs = _cvxpy_handover(chain.solver, data)
        watch.lap("hand-over")
        objective = None
        if solve:
            highs.run()
            watch.lap("solve")
            objective = highs.getInfo().objective_function_value + float(data.get("offset", 0.0))
        return watch.laps, objective

    return run


# ====================================================================== linopy
def linopy_model(family: str, size: int, solve: bool):
    """linopy's way: variables and constraints over labeled (xarray) coordinates, one
    vectorized expression per constraint family; the model reaches HiGHS through linopy's
    direct interface (`to_highspy`: arrays into passModel, no file). Solving is linopy's own
    `Model.solve(solver_name="highs", io_api="direct")`: it hands the model over again, runs
    HiGHS and writes the solution (and duals) back onto the labeled arrays."""
    import linopy
    import pandas as pd
    import xarray as xr

    if family == "transport":
        supply, demand, cost = transport_arrays(size)
        orig, dest = (pd.Index(names, name=dim) for names, dim in
                      zip(transport_names(size), ("ORIG", "DEST"), strict=True))

        def build():
            m = linopy.Model()
            ship = m.add_variables(lower=0, coords=[orig, dest], name="ship")
            m.add_objective((xr.DataArray(cost, coords=[orig, dest]) * ship).sum())
            m.add_constraints(ship.sum("DEST") <= xr.DataArray(supply, coords=[orig]),
                              name="supply_limit")
            m.add_constraints(ship.sum("ORIG") >= xr.DataArray(demand, coords=[dest]),
                              name="meet_demand")
            return m
    else:
        G = F = size
        grid, facs, dims = (pd.RangeIndex(0, G + 1, name="i"), pd.RangeIndex(1, F + 1, name="f"),
                            pd.RangeIndex(1, 3, name="k"))
        gx = xr.DataArray(np.arange(G + 1) / G, coords=[grid])

        def build():
            m = linopy.Model()
            j = grid.rename("j")
            y = m.add_variables(lower=0, upper=1, coords=[facs, dims], name="y")
            s = m.add_variables(lower=0, coords=[grid, j, facs], name="s")
            z = m.add_variables(coords=[grid, j, facs], binary=True, name="z")
            r = m.add_variables(coords=[grid, j, facs, dims], name="r")
            d = m.add_variables(name="d")
            m.add_objective(1 * d)
            m.add_constraints(z.sum("f") == 1, name="assign")
            m.add_constraints(s - d + M_BIG * z == M_BIG, name="budget")
            m.add_constraints(r.sel(k=1) + y.sel(k=1) == gx, name="offset_x")
            m.add_constraints(r.sel(k=2) + y.sel(k=2) == gx.rename(i="j"), name="offset_y")
            m.add_constraints(r - s <= 0, name="dist_hi")
            m.add_constraints(-r - s <= 0, name="dist_lo")
            return m

    def run():
        watch = Stopwatch()
        m = build()
        watch.lap("build")
        linopy.io.to_highspy(m)
        watch.lap("hand-over")
        objective = None
        if solve:
            m.solve(solver_name="highs", io_api="direct", output_flag=False)
            watch.lap("solve")
            objective = m.objective.value
        return watch.laps, objective

    return run


# ====================================================================== floor: highspy
def highspy_floor(family: str, size: int, solve: bool):
    import highspy

    inf = highspy.kHighsInf
    if family == "transport":
        supply, demand, cost = transport_arrays(size)

        def build():
            n, N = size, size * size
            k = np.arange(N, dtype=np.int32)
            index = np.empty(2 * N, dtype=np.int32)  # column i n + j: rows i and n + j
            index[0::2] = k // n
            index[1::2] = n + k % n
            return dict(
                n=N, m=2 * n, c=cost.ravel(), lb=np.zeros(N), ub=np.full(N, inf),
                rl=np.r_[np.full(n, -inf), demand], ru=np.r_[supply, np.full(n, inf)],
                start=np.arange(0, 2 * N + 1, 2, dtype=np.int32), index=index,
                value=np.ones(2 * N), integrality=np.zeros(N, dtype=np.int32),
            )
    else:
        G = F = size
        P = (G + 1) ** 2
        gx, gy = facility_grid(G)

        def build():
            # columns: y[f,k] (2F) | s[p,f] (PF) | z[p,f] (PF) | r[p,f,k] (2PF) | d
            PF = P * F
            pf = np.arange(PF)
            p, f = pf // F, pf % F
            Y, S, Z, R, D = 0, 2 * F, 2 * F + PF, 2 * F + 2 * PF, 2 * F + 4 * PF
            rx, ry = R + 2 * pf, R + 2 * pf + 1
            one = np.ones(PF)
            # rows: assign (P) | budget (PF) | offset_x, offset_y (2PF) | dist_hi, dist_lo (4PF)
            B, OX, OY = P, P + PF, P + 2 * PF
            H0, H1, L0, L1 = P + 3 * PF, P + 4 * PF, P + 5 * PF, P + 6 * PF
            rows = np.concatenate([
                p, B + pf, B + pf, B + pf, OX + pf, OX + pf, OY + pf, OY + pf,
                H0 + pf, H0 + pf, H1 + pf, H1 + pf, L0 + pf, L0 + pf, L1 + pf, L1 + pf])
            cols = np.concatenate([
                Z + pf, S + pf, Z + pf, np.full(PF, D), rx, Y + 2 * f, ry, Y + 2 * f + 1,
                rx, S + pf, ry, S + pf, rx, S + pf, ry, S + pf])
            vals = np.concatenate([
                one, one, M_BIG * one, -one, one, one, one, one,
                one, -one, one, -one, -one, -one, -one, -one])
            m_rows, n_cols = P + 7 * PF, D + 1
            A = sp.csc_array((vals, (rows, cols)), shape=(m_rows, n_cols))
            A.sort_indices()
            lb = np.full(n_cols, -inf)
            ub = np.full(n_cols, inf)
            lb[Y:S], ub[Y:S] = 0.0, 1.0
            lb[S:Z] = 0.0
            lb[Z:R], ub[Z:R] = 0.0, 1.0
            integrality = np.zeros(n_cols, dtype=np.int32)
            integrality[Z:R] = 1
            rhs_eq = np.concatenate([np.ones(P), M_BIG * one, gx[p], gy[p]])
            rl = np.concatenate([rhs_eq, np.full(4 * PF, -inf)])
            ru = np.concatenate([rhs_eq, np.zeros(4 * PF)])
            c = np.zeros(n_cols)
            c[D] = 1.0
            return dict(
                n=n_cols, m=m_rows, c=c, lb=lb, ub=ub, rl=rl, ru=ru,
                start=A.indptr.astype(np.int32), index=A.indices.astype(np.int32),
                value=A.data, integrality=integrality,
            )

    def run():
        watch = Stopwatch()
        a = build()
        watch.lap("build")
        h = highspy.Highs()
        h.setOptionValue("output_flag", False)
        h.passModel(a["n"], a["m"], len(a["value"]), highspy.MatrixFormat.kColwise,
                    highspy.ObjSense.kMinimize, 0.0, a["c"], a["lb"], a["ub"], a["rl"], a["ru"],
                    a["start"], a["index"], a["value"], a["integrality"])
        watch.lap("hand-over")
        objective = None
        if solve:
            h.run()
            watch.lap("solve")
            objective = h.getInfo().objective_function_value
        return watch.laps, objective

    return run
