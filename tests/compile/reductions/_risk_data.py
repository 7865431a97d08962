"""Shared by the risk and scenario tests: a tiny binary problem with uncertain costs, whose
risk measures are checked against brute-force enumeration."""

from __future__ import annotations

import itertools

import numpy as np

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


def cvar_upper(losses):
    """Rockafellar–Uryasev CVaR of the upper tail (a minimized loss)."""
    k = 1.0 / ((1 - ALPHA) * len(losses))
    return min(e + k * np.maximum(losses - e, 0).sum() for e in losses)


def cvar_lower(gains):
    """The lower-tail CVaR (a maximized gain)."""
    k = 1.0 / ((1 - ALPHA) * len(gains))
    return max(e - k * np.maximum(e - gains, 0).sum() for e in gains)


def brute(aggregate, best):
    picks = [np.array(b) for b in itertools.product([0, 1], repeat=N) if sum(b) >= 2]
    return best(aggregate(COST @ x) for x in picks)


CASES = [
    ("minimize", f"cvar(alpha, {LOSS})", cvar_upper, min),
    ("maximize", f"cvar(alpha, {LOSS})", cvar_lower, max),
    ("minimize", f"worst({LOSS})", np.max, min),
    ("maximize", f"worst({LOSS})", np.min, max),
    ("minimize", f"mean({LOSS})", np.mean, min),
    ("minimize", LOSS, np.mean, min),  # unwrapped: the mean over scenarios
    ("minimize", f"{LOSS} + 0.5 * worst({LOSS})", lambda v: v.mean() + 0.5 * v.max(), min),
    ("maximize", f"2 * cvar(alpha, {LOSS}) - 1", lambda v: 2 * cvar_lower(v) - 1, max),
]


