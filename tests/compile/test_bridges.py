"""Bridges: scenarios of uncertain params, risk aggregators (CVaR, worst, mean) and epigraphs of
piecewise-linear atoms, each checked against brute-force enumeration of a tiny binary problem."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from _helpers import bind

import dfl_dsl as dfl
from dfl_dsl.compile.bridges import bridge
from dfl_dsl.errors import DataError

N, S, ALPHA = 5, 7, 0.6
rng = np.random.default_rng(3)
COST = rng.normal(size=(S, N))
DATA = {"I": list(range(N)), "cost": COST.tolist(), "alpha": ALPHA, "kmin": 2}

RISK = """
set I; param cost{I} : uncertain; param alpha default 0.5; param kmin : int;
var x{I} binary;
%s f: %s;
subject to pick: sum{i in I} x[i] >= kmin;
"""
LOSS = "sum{i in I} cost[i] * x[i]"


def _cvar_upper(losses):
    """Rockafellar–Uryasev CVaR of the upper tail (a minimized loss)."""
    k = 1.0 / ((1 - ALPHA) * len(losses))
    return min(e + k * np.maximum(losses - e, 0).sum() for e in losses)


def _cvar_lower(gains):
    """The lower-tail CVaR (a maximized gain)."""
    k = 1.0 / ((1 - ALPHA) * len(gains))
    return max(e - k * np.maximum(e - gains, 0).sum() for e in gains)


def _brute(aggregate, best):
    picks = [np.array(b) for b in itertools.product([0, 1], repeat=N) if sum(b) >= 2]
    return best(aggregate(COST @ x) for x in picks)


CASES = [
    ("minimize", f"cvar(alpha, {LOSS})", _cvar_upper, min),
    ("maximize", f"cvar(alpha, {LOSS})", _cvar_lower, max),
    ("minimize", f"worst({LOSS})", np.max, min),
    ("maximize", f"worst({LOSS})", np.min, max),
    ("minimize", f"mean({LOSS})", np.mean, min),
    ("minimize", LOSS, np.mean, min),  # unwrapped: the mean over scenarios
    ("minimize", f"{LOSS} + 0.5 * worst({LOSS})", lambda v: v.mean() + 0.5 * v.max(), min),
    ("maximize", f"2 * cvar(alpha, {LOSS}) - 1", lambda v: 2 * _cvar_lower(v) - 1, max),
]


@pytest.mark.parametrize("backend", ["highs", "cvxpy"])
@pytest.mark.parametrize(("sense", "body", "aggregate", "best"), CASES,
                         ids=[f"{c[0]}-{c[1][:12]}" for c in CASES])
def test_risk_aggregators_against_brute_force(sense, body, aggregate, best, backend):
    inst = bind(RISK % (sense, body), DATA)
    sol = inst.solve(backend)
    assert sol.status == "optimal"
    assert sol.objective == pytest.approx(_brute(aggregate, best), abs=1e-6)


NESTED_LOSS = "sum{i in I} (cost[i] * x[i] + 2 * pos(cost[i] - x[i]))"


def _nested_losses(x):
    return COST @ x + 2 * np.maximum(COST - x, 0).sum(axis=1)


@pytest.mark.parametrize("backend", ["highs", "cvxpy"])
@pytest.mark.parametrize(("sense", "body", "aggregate", "best"), [
    ("minimize", f"cvar(alpha, {NESTED_LOSS})", _cvar_upper, min),
    ("minimize", f"worst({NESTED_LOSS})", np.max, min),
    ("minimize", f"mean({NESTED_LOSS})", np.mean, min),
    ("maximize", "cvar(alpha, sum{i in I} (cost[i] * x[i] - pos(cost[i] - x[i])))",
     _cvar_lower, max),
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
    assert sum(b.body.rows for b in bridged.rows if b.name == "#cvar") == S


def test_uncertain_constraints_hold_for_every_scenario():
    text = """
    set I; param cost{I} : uncertain; param value{I};
    var x{I} binary;
    maximize f: sum{i in I} value[i] * x[i];
    subject to budget: sum{i in I} cost[i] * x[i] <= 1;
    """
    costs = np.abs(COST)
    value = rng.uniform(1, 2, size=N)
    inst = bind(text, {"I": list(range(N)), "cost": costs.tolist(), "value": value.tolist()})
    rows = [b for b in bridge(inst.compile(), inst).rows if b.name.startswith("budget")]
    assert [b.name for b in rows] == ["budget"] + [f"budget@{s}" for s in range(S)]
    best = max(value @ np.array(b) for b in itertools.product([0, 1], repeat=N)
               if np.all(costs @ np.array(b) <= 1 + 1e-12))
    assert inst.solve("highs").objective == pytest.approx(best)


def test_scenario_count_must_agree():
    text = ("set I; param a{I} : uncertain; param b{I} : uncertain; var x{I} in [0, 1];"
            "minimize f: sum{i in I} (a[i] + b[i]) * x[i];")
    # data that disagrees is refused when it is bound (so `dfl check --data` says so too),
    # naming the params (it used to be found only at solve time, naming neither, nor any file)
    with pytest.raises(DataError, match="same number of scenarios") as info:
        bind(text, {"I": [1, 2], "a": [[1, 2], [3, 4]], "b": [[1, 2]]})
    assert "`a` has 2, `b` has 1" in info.value.message and info.value.filename == "<data>"
    # scenarios set after binding (sampled from a generator) are checked by the bridge
    inst = bind(text, {"I": [1, 2], "a": [[1, 2], [3, 4]], "b": [[1, 2], [0, 0]]})
    inst.uncertain[1].extra["scenarios"] = np.array([[1.0, 2.0]])
    with pytest.raises(DataError, match="`a` has 2, `b` has 1"):
        inst.solve("highs")


def test_uncertain_param_without_scenarios():
    inst = bind("set I; param a{I} : uncertain; var x{I} in [0, 1];"
                "minimize f: sum{i in I} a[i] * x[i];", {"I": [1, 2]})
    with pytest.raises(dfl.DflError, match="has no scenarios") as info:
        inst.solve("highs")
    assert info.value.filename == "m.opt"


# ---------------------------------------------------------------------- epigraphs
EPI_CASES = [
    ("minimize", "sum{i in I} abs(x[i] - c[i])", lambda x, c: np.abs(x - c).sum()),
    ("minimize", "max{i in I} (c[i] * x[i])", lambda x, c: (c * x).max()),
    ("minimize", "norm1(x - c) + norm_inf(x - c)",
     lambda x, c: np.abs(x - c).sum() + np.abs(x - c).max()),
    ("minimize", "sum{i in I} pos(c[i] - x[i]) + max(x[0], x[1])",
     lambda x, c: np.maximum(c - x, 0).sum() + max(x[0], x[1])),
    ("maximize", "min{i in I} (x[i] + c[i]) + min(x[2], 0.5)",
     lambda x, c: (x + c).min() + min(x[2], 0.5)),
    # atoms nested in atoms: each inner one gets its own epigraph variables
    ("minimize", "max{i in I} pos(x[i] - c[i]) + norm_inf(x - c)",
     lambda x, c: np.maximum(x - c, 0).max() + np.abs(x - c).max()),
    ("minimize", "max(max{i in I} abs(x[i] - c[i]), 0.9) - 2 * min{i in I} min(x[i], c[i])",
     lambda x, c: max(np.abs(x - c).max(), 0.9) - 2 * np.minimum(x, c).min()),
    ("maximize", "min{i in I} (c[i] - pos(x[i] - c[i]))",
     lambda x, c: (c - np.maximum(x - c, 0)).min()),
    # |e| of an e of known sign with atoms in it: one side of the epigraph is |e|
    ("minimize", "sum{i in I} abs(-min(x[i] - c[i], 0)) + norm1(pos(x - c)) + 0.1 * sum(x)",
     lambda x, c: np.maximum(c - x, 0).sum() + np.maximum(x - c, 0).sum() + 0.1 * x.sum()),
]


@pytest.mark.parametrize(("sense", "body", "fn"), EPI_CASES, ids=[c[1][:20] for c in EPI_CASES])
def test_epigraphs_against_brute_force(sense, body, fn):
    c = np.array([0.3, 1.4, -0.2, 0.8])
    text = f"""param n : int; param c[n]; set I = 0..n-1;
    var x[n] binary;
    {sense} f: {body};
    subject to some: sum(x) >= 2;"""
    inst = bind(text, {"n": 4, "c": c.tolist()})
    picks = [np.array(b, float) for b in itertools.product([0, 1], repeat=4) if sum(b) >= 2]
    best = (min if sense == "minimize" else max)(fn(x, c) for x in picks)
    for backend in ("highs", "cvxpy"):
        sol = inst.solve(backend)
        assert sol.objective == pytest.approx(best, abs=1e-7), backend

