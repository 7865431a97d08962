"""RiskMeasures: mean, cvar and worst over the scenarios, in the objective and in constraints,
the atoms nested in a loss lowered per scenario — each against brute-force enumeration of a tiny
binary problem."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from _helpers import bind
from _risk_data import (
    CASES,
    COST,
    DATA,
    LOSS,
    RISK,
    N,
    S,
    brute,
    cvar_lower,
    cvar_upper,
)

from dfl_dsl.compile.bridges import bridge
from dfl_dsl.compile.problem import Origin


@pytest.mark.parametrize("backend", ["highs", "cvxpy"])
@pytest.mark.parametrize(("sense", "body", "aggregate", "best"), CASES,
                         ids=[f"{c[0]}-{c[1][:12]}" for c in CASES])
def test_risk_aggregators_against_brute_force(sense, body, aggregate, best, backend):
    inst = bind(RISK % (sense, body), DATA)
    sol = inst.solve(backend)
    assert sol.status == "optimal"
    assert sol.objective == pytest.approx(brute(aggregate, best), abs=1e-6)


NESTED_LOSS = "sum{i in I} (cost[i] * x[i] + 2 * pos(cost[i] - x[i]))"


def _nested_losses(x):
    return COST @ x + 2 * np.maximum(COST - x, 0).sum(axis=1)


@pytest.mark.parametrize("backend", ["highs", "cvxpy"])
@pytest.mark.parametrize(("sense", "body", "aggregate", "best"), [
    ("minimize", f"cvar(alpha, {NESTED_LOSS})", cvar_upper, min),
    ("minimize", f"worst({NESTED_LOSS})", np.max, min),
    ("minimize", f"mean({NESTED_LOSS})", np.mean, min),
    ("maximize", "cvar(alpha, sum{i in I} (cost[i] * x[i] - pos(cost[i] - x[i])))",
     cvar_lower, max),
], ids=["cvar", "worst", "mean", "cvar-lower"])
def test_piecewise_linear_atoms_inside_risk_aggregators(sense, body, aggregate, best, backend):
    # a newsvendor-style loss: the atoms in it are bridged once per scenario
    sol = bind(RISK % (sense, body), DATA).solve(backend)
    picks = [np.array(b) for b in itertools.product([0, 1], repeat=N) if sum(b) >= 2]
    if body.startswith("cvar(alpha, sum{i in I} (cost[i] * x[i] - pos"):
        want = best(aggregate(COST @ x - np.maximum(COST - x, 0).sum(axis=1)) for x in picks)
    else:
        want = best(aggregate(_nested_losses(x)) for x in picks)
    assert sol.status == "optimal" and sol.objective == pytest.approx(want, abs=1e-6)


def test_cvar_adds_eta_and_one_tail_variable_per_scenario():
    inst = bind(RISK % ("minimize", f"cvar(alpha, {LOSS})"), DATA)
    bridged = bridge(inst.compile(), inst)
    assert bridged.width == inst.width + 1 + S
    assert bridged.aux_lower.tolist() == [-np.inf] + [0.0] * S
    assert sum(b.body.rows for b in bridged.rows if b.origin == Origin("risk", "cvar")) == S


VALUE = np.array([1.0, 0.7, 1.3, 0.4, 0.9])
RISK_ROWS = """
set I; param cost{I} : uncertain; param alpha default 0.5; param value{I};
var x{I} binary;
maximize f: sum{i in I} value[i] * x[i];
subject to risk: %s <= %s;
"""


@pytest.mark.parametrize("backend", ["highs", "pyomo", "cvxpy"])
@pytest.mark.parametrize(("lhs", "budget", "aggregate"), [
    (f"cvar(alpha, {LOSS})", 0.8, cvar_upper),
    (f"worst({LOSS})", 1.0, np.max),
    (f"mean({LOSS})", 0.3, np.mean),
    (f"2 * cvar(alpha, {NESTED_LOSS}) - 1", 7.15,
     lambda v: 2 * cvar_upper(v) - 1),  # (v: the nested losses)
])
def test_risk_aggregators_in_constraints_against_brute_force(lhs, budget, aggregate, backend):
    """A risk aggregator bounded from above in a constraint: the same bridge as in the
    objective (`cvar(α, L) <= b`: the Rockafellar–Uryasev rows), checked by enumeration."""
    data = {**DATA, "value": VALUE.tolist()}
    inst = bind(RISK_ROWS % (lhs, budget), data)
    assert inst.klass.name == "MILP"
    nested = "pos" in lhs
    best = -np.inf
    for b in itertools.product([0, 1], repeat=N):
        x = np.array(b, float)
        losses = _nested_losses(x) if nested else COST @ x
        if aggregate(losses) <= budget + 1e-9:
            best = max(best, VALUE @ x)
    sol = inst.solve(backend)
    assert sol.status == "optimal"
    assert sol.objective == pytest.approx(best, abs=1e-6)


