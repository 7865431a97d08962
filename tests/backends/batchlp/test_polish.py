"""The certificate accepts an optimum and nothing else; polishing turns a near-optimal pair
into the exact optimum."""

from __future__ import annotations

import numpy as np
import torch
from _lp_helpers import batch_of, form_of

from dfl_dsl.backends.batchlp.polish import certify, identify, polish
from dfl_dsl.backends.batchlp.problem import precondition


def _lp():
    # min -x1 - 2 x2  s.t.  x1 + x2 <= 4,  x1 - x2 >= -2,  0 <= x <= 3 : optimum (1, 3)
    form = form_of(np.array([[1.0, 1.0], [1.0, -1.0]]), [-np.inf, -2.0], [4.0, np.inf],
                   [0.0, 0.0], [3.0, 3.0])
    return batch_of(form, np.array([[-1.0, -2.0]]))


def test_the_optimum_with_its_duals_is_certified():
    lp = _lp()
    x = torch.tensor([[1.0, 3.0]], dtype=torch.float64)
    y = torch.tensor([[-1.0, 0.0]], dtype=torch.float64)  # row 1 at its upper bound
    cert = certify(lp, x, y)
    assert bool(cert.optimal[0]) and float(cert.gap[0]) == 0.0
    assert float(cert.objective[0]) == -7.0


def test_a_feasible_suboptimal_point_or_a_wrong_dual_is_refused():
    lp = _lp()
    y = torch.tensor([[-1.0, 0.0]], dtype=torch.float64)
    assert not bool(certify(lp, torch.tensor([[0.0, 3.0]], dtype=torch.float64), y).optimal[0])
    wrong = torch.tensor([[0.0, 0.0]], dtype=torch.float64)  # no dual bound from the rows
    x = torch.tensor([[1.0, 3.0]], dtype=torch.float64)
    assert not bool(certify(lp, x, wrong).optimal[0])
    # an infeasible point is refused whatever its objective
    assert not bool(certify(lp, torch.tensor([[2.0, 3.0]], dtype=torch.float64), y).optimal[0])


def test_polishing_a_nearby_pair_gives_the_exact_optimum():
    lp = _lp()
    scaling = precondition(lp.K)
    scaled = scaling.apply(lp)
    x_near = torch.tensor([[1.0 + 3e-6, 3.0 - 2e-6]], dtype=torch.float64)
    y_near = torch.tensor([[-1.0 + 1e-6, 1e-7]], dtype=torch.float64)
    xs, ys = scaling.to_scaled(x_near, y_near)
    part = identify(scaled, xs, ys, torch.tensor([1e-4], dtype=torch.float64))
    x, y, ok = polish(lp, x_near, y_near, part)
    assert bool(ok[0])
    np.testing.assert_array_equal(x.numpy(), [[1.0, 3.0]])
    assert bool(certify(lp, x, y).optimal[0])
