"""LPs for the batched solver's tests (random ones with every kind of row and column, as
LinearForms and batches) and HiGHS's answers to compare with."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
import torch

from dfl_dsl.backends.batchlp import BatchLP, RowOperator
from dfl_dsl.backends.highs import HighsModel
from dfl_dsl.compile.linear import LinearForm


def form_of(A, rl, ru, lb, ub, integer=None) -> LinearForm:
    """A LinearForm with no θ, to hand the same feasible set to HiGHS."""
    m, n = A.shape
    empty = np.zeros(0, dtype=np.int64)
    return LinearForm(
        n=n, n_model=n, n_theta=0, sign=1.0, c=np.zeros(n), c0=0.0, P=None,
        A=sp.csr_array(A), rl=np.asarray(rl, float), ru=np.asarray(ru, float),
        lb=np.asarray(lb, float), ub=np.asarray(ub, float),
        integer=np.zeros(n, bool) if integer is None else integer,
        c_theta=sp.csr_array((n, 0)), c0_theta=np.zeros(0), row_theta=sp.csr_array((m, 0)),
        a_theta=(empty, empty, empty, np.zeros(0)))


def highs_optima(form: LinearForm, costs: np.ndarray) -> tuple[list[str], np.ndarray]:
    """HiGHS's status and objective for each cost vector."""
    model = HighsModel(form, theta=np.zeros(0))
    statuses, values = [], []
    for c in costs:
        model.set_objective(c, 0.0)
        result = model.solve(want_duals=False)
        statuses.append(result.status)
        values.append(result.objective if result.status == "optimal" else np.nan)
    return statuses, np.asarray(values)


def batch_of(form: LinearForm, costs: np.ndarray) -> BatchLP:
    f = lambda a: torch.as_tensor(np.asarray(a, float), dtype=torch.float64)  # noqa: E731
    return BatchLP(RowOperator.from_scipy(form.A), f(costs), f(form.rl), f(form.ru),
                   f(form.lb), f(form.ub))


def random_form(rng: np.random.Generator, m: int, n: int) -> LinearForm:
    """A feasible LP with every kind of row (<=, >=, ==, ranged) and column (boxed, one-sided,
    free), bounded for any cost: every column lies in a box or is pinned by equality rows
    through a boxed point."""
    A = rng.normal(size=(m, n)) * (rng.random((m, n)) < 0.4)
    point = rng.uniform(-1, 1, n)
    activity = A @ point
    kind = rng.integers(0, 4, m)  # <=, >=, ==, ranged
    slack = rng.uniform(0.1, 1.0, m)
    rl = np.where(kind == 0, -np.inf, np.where(kind == 3, activity - slack, activity - slack))
    ru = np.where(kind == 1, np.inf, activity + slack)
    rl = np.where(kind == 2, activity, rl)
    ru = np.where(kind == 2, activity, ru)
    lb = np.where(rng.random(n) < 0.8, point - rng.uniform(0.5, 2, n), -np.inf)
    ub = np.where(rng.random(n) < 0.8, point + rng.uniform(0.5, 2, n), np.inf)
    # a column with an open side gets a box through extra rows, so no cost is unbounded
    box = np.eye(n)[~(np.isfinite(lb) & np.isfinite(ub))]
    if len(box):
        A = np.vstack([A, box])
        idx = ~(np.isfinite(lb) & np.isfinite(ub))
        rl = np.concatenate([rl, point[idx] - 3])
        ru = np.concatenate([ru, point[idx] + 3])
    return form_of(A, rl, ru, lb, ub)
