"""The batched ADMM: shared and per-problem matrices agree, warm starts cut iterations, μ grows
until the relaxation is exact, unbounded problems are certified, the prox is the L1 penalty's,
float32 and CUDA."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from dfl_dsl.backends.flexqp import QPBatch, Settings, default_policy, solve
from dfl_dsl.backends.flexqp.admm import prox_penalty
from dfl_dsl.backends.flexqp.iterates import State
from dfl_dsl.generators.qp_classes import random_qp

TIGHT = Settings(eps_abs=1e-9, eps_rel=1e-9)


def _shared(batch=6, n=12, seed=0) -> QPBatch:
    return QPBatch.from_numpy(*random_qp(n, batch=batch, seed=seed, shared=True).arrays())


def test_shared_and_per_problem_matrices_give_the_same_solutions():
    qp = _shared()
    per = QPBatch(qp.P.expand(qp.batch, -1, -1), qp.q, qp.A.expand(qp.batch, -1, -1), qp.lo,
                  qp.hi)
    a = solve(qp, default_policy(), TIGHT)
    b = solve(per, default_policy(), TIGHT)
    assert a.status == b.status == ["optimal"] * qp.batch
    np.testing.assert_allclose(a.x, b.x, atol=1e-7)
    # KKT: stationarity and dual signs (y > 0 only at an upper bound)
    res = qp.Px(a.x) + qp.q + qp.ATy(a.y)
    assert res.abs().max() < 1e-7
    ax = qp.Ax(a.x)
    assert bool(((a.y > 1e-7) <= (ax >= qp.hi - 1e-6)).all())


def test_polishing_reaches_the_unpolished_solution_in_fewer_iterations():
    qp = _shared(batch=8, n=20, seed=4)
    plain = solve(qp, default_policy(), Settings(eps_abs=1e-10, eps_rel=1e-10, polish=False))
    polished = solve(qp, default_policy(), Settings(eps_abs=1e-6, eps_rel=1e-6))
    assert polished.status == plain.status == ["optimal"] * qp.batch
    assert polished.extra["polished"] > 0
    assert polished.iterations.sum() < plain.iterations.sum()
    # a polished point is exact on its active rows: far inside the 1e-6 asked for
    np.testing.assert_allclose(polished.x, plain.x, atol=1e-8)
    ax = qp.Ax(polished.x)
    assert bool(((polished.y > 0) <= (ax >= qp.hi - 1e-9)).all())


def test_the_schur_path_polishes_sooner_and_agrees_with_the_reduced_kkt_path():
    # shared, definite P: every problem is tried at the second check (cheap Gram-submatrix
    # rounds); without the Schur path only settled guesses are, on n × n factorizations
    from dfl_dsl.backends.flexqp import kkt

    qp = _shared(batch=8, n=20, seed=4)
    settings = Settings(eps_abs=1e-6, eps_rel=1e-6)
    assert kkt.Schur.of(qp.row_scaled()[0], {}) is not None
    fast = solve(qp, default_policy(), settings, work={})
    of = kkt.Schur.of
    kkt.Schur.of = classmethod(lambda cls, qp, work: None)
    try:
        general = solve(qp, default_policy(), settings, work={})
    finally:
        kkt.Schur.of = of
    assert fast.status == general.status == ["optimal"] * qp.batch
    assert fast.extra["polished"] == general.extra["polished"] == qp.batch
    assert fast.iterations.sum() < general.iterations.sum()
    assert int(fast.iterations.min()) == 2 * settings.check_every
    np.testing.assert_allclose(fast.x, general.x, atol=1e-8)


def test_a_gram_submatrix_that_does_not_factor_falls_back_to_the_reduced_kkt():
    from dfl_dsl.backends.flexqp import kkt

    qp = _shared(batch=4, n=12, seed=5)
    factor = kkt.Schur.factor
    kkt.Schur.factor = lambda self, active: None
    try:
        result = solve(qp, default_policy(), Settings(eps_abs=1e-8, eps_rel=1e-8), work={})
    finally:
        kkt.Schur.factor = factor
    ref = solve(qp, default_policy(), TIGHT)
    assert result.status == ["optimal"] * qp.batch and result.extra["polished"] > 0
    np.testing.assert_allclose(result.x, ref.x, atol=1e-7)


def test_a_warm_started_batch_is_polished_at_the_first_check_on_the_schur_path():
    qp = _shared(batch=8, n=20, seed=4)
    settings = Settings(eps_abs=1e-6, eps_rel=1e-6)
    cold = solve(qp, default_policy(), settings, work={})
    nudged = QPBatch(qp.P, qp.q + 1e-3, qp.A, qp.lo, qp.hi)
    again = solve(nudged, default_policy(), settings, State(cold.x, cold.z, cold.y), work={})
    assert again.status == ["optimal"] * qp.batch and again.extra["polished"] == qp.batch
    assert again.iterations.tolist() == [settings.check_every] * qp.batch
    fresh = solve(nudged, default_policy(), TIGHT)
    np.testing.assert_allclose(again.x, fresh.x, atol=1e-8)


def test_float32_polishes_on_the_schur_path_with_refinement():
    qp = _shared(batch=8, n=20, seed=4)
    ref = solve(qp, default_policy(), TIGHT)
    low = solve(qp.to(torch.float32), default_policy(), Settings(eps_abs=1e-4, eps_rel=1e-4),
                work={})
    assert low.status == ["optimal"] * qp.batch and low.extra["polished"] == qp.batch
    assert float((low.x.double() - ref.x).abs().max()) < 1e-3


def test_the_guess_weight_narrows_the_guessed_rows():
    from dfl_dsl.backends.flexqp.kkt import guess_active

    qp = QPBatch.from_numpy(np.eye(1), [[0.0]], np.eye(3, 1), [-1.0, -1.0, -1.0],
                            [1.0, 1.0, 1.0])
    Ax = torch.tensor([[0.9, 0.5, -0.95]], dtype=torch.float64)
    y = torch.tensor([[0.2, 0.2, -0.2]], dtype=torch.float64)
    upper, lower = guess_active(qp, Ax, y, 1.0)
    assert upper.tolist() == [[True, False, False]] and lower.tolist() == [[False, False, True]]
    upper, lower = guess_active(qp, Ax, y, 0.3)  # 1 − 0.9 > 0.3 · 0.2
    assert not bool(upper.any()) and lower.tolist() == [[False, False, True]]


def test_polishing_leaves_an_infeasible_problem_to_the_relaxation():
    # x <= -1 and x >= 1 (as -x <= -1): no active set is feasible, so no polish passes
    qp = QPBatch.from_numpy(np.eye(1), [[0.0]], [[1.0], [-1.0]], [-np.inf, -np.inf],
                            [-1.0, -1.0])
    result = solve(qp, default_policy(), TIGHT)
    assert result.status == ["relaxed"] and result.extra["polished"] == 0
    assert float(result.violation.sum()) == pytest.approx(2.0, abs=1e-6)


def test_a_warm_start_needs_fewer_iterations():
    qp = _shared(seed=1)
    cold = solve(qp, default_policy(), TIGHT)
    nudged = QPBatch(qp.P, qp.q + 1e-3, qp.A, qp.lo, qp.hi)
    again = solve(nudged, default_policy(), TIGHT, State(cold.x, cold.z, cold.y))
    fresh = solve(nudged, default_policy(), TIGHT)
    assert again.iterations.sum() < fresh.iterations.sum()
    np.testing.assert_allclose(again.x, fresh.x, atol=1e-6)


def test_mu_grows_until_a_feasible_qp_reaches_its_optimum():
    # min ½(x − 100)² s.t. x <= 0: the optimal dual is 100, far above a small initial μ
    qp = QPBatch.from_numpy(np.eye(1), [[-100.0]], np.eye(1), [-np.inf], [0.0])
    result = solve(qp, None, Settings(eps_abs=1e-9, eps_rel=1e-9, mu=1.0))
    assert result.status == ["optimal"]
    assert float(result.x[0, 0]) == pytest.approx(0.0, abs=1e-7)
    assert float(result.mu[0, 0]) >= 100 and float(result.y[0, 0]) == pytest.approx(100, rel=1e-6)


@pytest.mark.parametrize("policy", [default_policy(), None])
def test_unbounded_problems_of_a_batch_are_certified_and_leave_it(policy):
    # min qᵀx over x >= 0: unbounded exactly when some q_i < 0 (however slightly)
    q = [[1.0, 2.0], [-1.0, 1.0], [1.0, -1e-3], [0.0, 0.0]]
    qp = QPBatch.from_numpy(np.zeros((2, 2)), q, np.eye(2), [0.0, 0.0], [np.inf, np.inf])
    result = solve(qp, policy, TIGHT)
    assert result.status == ["optimal", "unbounded", "unbounded", "optimal"]
    assert int(result.iterations.max()) <= 60


def test_mu_grows_when_only_the_relaxation_is_unbounded():
    # min −1e6·x s.t. x <= 1: the optimal dual 1e6 exceeds μ = 1e3, so the relaxed objective
    # −1e6·x + μ(x − 1)₊ falls without bound; the iterates diverged to the iteration cap
    qp = QPBatch.from_numpy(np.zeros((1, 1)), [[-1e6]], [[1.0]], [-np.inf], [1.0])
    result = solve(qp, default_policy(), TIGHT)
    assert result.status == ["optimal"] and float(result.mu[0, 0]) >= 1e6
    assert float(result.x[0, 0]) == pytest.approx(1.0, abs=1e-9)


def test_prox_moves_towards_the_interval_by_at_most_t():
    w = torch.tensor([-3.0, -0.5, 0.5, 2.0, 5.0])
    lo, hi, t = torch.zeros(5), torch.ones(5), torch.full((5,), 1.5)
    assert prox_penalty(w, lo, hi, t).tolist() == [-1.5, 0.0, 0.5, 1.0, 3.5]


def test_float32_solves_to_float32_accuracy():
    qp = _shared(seed=2)
    ref = solve(qp, default_policy(), TIGHT)
    low = solve(qp.to(torch.float32), default_policy(),
                Settings(eps_abs=1e-4, eps_rel=1e-4))
    assert low.x.dtype == torch.float32 and low.status == ["optimal"] * qp.batch
    assert float((low.x.double() - ref.x).abs().max()) < 1e-2


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_cuda_matches_cpu():
    qp = _shared(seed=3)
    cpu = solve(qp, default_policy(), TIGHT)
    gpu = solve(qp.to(device="cuda"), default_policy("cuda"), TIGHT)
    assert gpu.x.is_cuda and gpu.status == cpu.status
    np.testing.assert_allclose(gpu.x.cpu(), cpu.x, atol=1e-6)
