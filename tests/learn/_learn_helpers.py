"""Models shared by the learning tests: "pick the cheapest of three items" written three ways
(minimize, maximize of the negated cost, maximize of a profit), the example models' paths, and
the Gen-DFL tests' scenario models."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from _helpers import bind

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
SHORTEST_PATH = EXAMPLES / "shortest_path" / "shortest_path.opt"

_PICK = "set I; param c{I} : predicted; var x{I} binary; %s f: sum{i in I} %s; " \
        "s.t. one: sum{i in I} x[i] == 1;"
PICK_MIN = _PICK % ("minimize", "c[i] * x[i]")
PICK_MAX = _PICK % ("maximize", "-c[i] * x[i]")
PICK_PROFIT = _PICK % ("maximize", "c[i] * x[i]")
PROFIT_SHIFT = 4.0  # profit = 4 - cost: with exactly one item picked, the same problem


@dataclass
class Pick:
    """One formulation of "pick the cheapest of three items".

    `data(cost)` is what the model's param holds for a cost vector, and `dtheta` the derivative
    of that param with respect to the cost (+1, or -1 for the profit form), so the losses'
    gradients with respect to the param are `dtheta` times those with respect to the cost.
    """

    name: str
    inst: object
    dtheta: float

    def data(self, cost) -> np.ndarray:
        cost = np.asarray(cost, dtype=float)
        return PROFIT_SHIFT - cost if self.name == "profit" else cost


# the Gen-DFL tests' models: a CVaR portfolio (ξ in the epigraph rows' matrix) and a mean +
# worst-case model with the uncertain param also in a constraint
PORTFOLIO = """param n : int; param alpha default 0.8; param ret[n] : uncertain;
var w[n] in [0, 1];
maximize tail: cvar(alpha, ret @ w);
s.t. budget: sum(w) == 1;"""

# a mean term and a worst-case term, with the uncertain param also in a constraint
MIXED = """set I; param c{I} : uncertain; param cap default 3;
var x{I} in [0, 2];
minimize f: sum{i in I} c[i] * x[i] + 0.5 * worst(sum{i in I} c[i] * x[i]);
s.t. need: sum{i in I} x[i] >= 2;
s.t. room{i in I}: c[i] * x[i] <= cap;"""


def portfolio(n=4):
    return bind(PORTFOLIO, {"n": n, "ret": np.zeros((2, n)).tolist()})


def corrupted(path, change) -> None:
    """(These were KeyErrors, "unhashable" TypeErrors, torch RuntimeErrors, "predicts 32 values;
    has 32" for a string size, or NaN weights loaded silently.)"""
    state = torch.load(path, weights_only=True)
    if change in ("nan", "shape"):
        first, weight = next(iter(state["state_dict"].items()))
        state["state_dict"][first] = (torch.full_like(weight, float("nan")) if change == "nan"
                                      else torch.zeros(3, 3))
    else:
        change(state)
    torch.save(state, path)


def pyepo_listed(points: np.ndarray):
    """A PyEPO maximize optModel answering argmax over listed feasible `points` (exact, as our
    enumerating oracle is): the side-by-side tests' PyEPO side of a maximize model."""
    from pyepo import EPO
    from pyepo.model.opt import optModel

    class Listed(optModel):
        def _getModel(self):
            self.modelSense, self.cost = EPO.MAXIMIZE, np.zeros(points.shape[1])
            return None, list(range(points.shape[1]))

        def setObj(self, c):
            self.cost = np.asarray(c, dtype=float)

        def solve(self):
            best = int(np.argmax(points @ self.cost))
            return points[best].copy(), float(points[best] @ self.cost)

    return Listed()


def knapsack_side_by_side(num_data: int):
    """(inst, PyEPO's listed maximize model, values c, true solutions w, 8 predictions) for
    the 2 × 32 knapsack (PyEPO's generator, seed 135)."""
    import dfl_dsl as dfl
    from dfl_dsl.generators import knapsack
    from dfl_dsl.learn.enumeration import feasible_points
    from dfl_dsl.learn.oracle import Oracle

    data = knapsack(num_data, 5, 32, 2, 4, 0.5, 135)
    inst = dfl.load(EXAMPLES / "knapsack" / "knapsack.opt").bind(data.instance)
    optmodel = pyepo_listed(feasible_points(inst.linear_form()))
    c = torch.as_tensor(data.targets["value"], dtype=torch.float64)
    w = torch.as_tensor(Oracle(inst).solve_theta(c).w)
    cp = torch.as_tensor(np.random.default_rng(0).normal(3.0, 1.0, (8, c.shape[1])))
    return inst, optmodel, data.features, c, w, cp


# a separable convex QP: x_i = clip(-c_i / 2, -1, 1) minimizes x_i² + c_i x_i (and, with c
# negated, maximizes c_i x_i - x_i²): decisions and values by hand
QP_MIN = ("set I; param c{I} : predicted; var x{I} in [-1, 1];"
          "minimize f: sum{i in I} (x[i]^2 + c[i] * x[i]);")
QP_MAX = ("set I; param c{I} : predicted; var x{I} in [-1, 1];"
          "maximize f: sum{i in I} (c[i] * x[i] - x[i]^2);")
QP_COST, QP_COST_HAT = [1.0, -4.0, 0.5], [-1.0, -1.0, 0.5]
