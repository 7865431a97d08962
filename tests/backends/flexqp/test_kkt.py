"""The active-set KKT solves: the Schur path (shared definite P: G[S, S] factors, padded per
batch) agrees with the reduced n × n KKT path, and is declined where it doesn't apply."""

from __future__ import annotations

import torch

from dfl_dsl.backends.flexqp import QPBatch
from dfl_dsl.backends.flexqp.kkt import Schur, SchurFactors, solve_active


def _batch(B=5, n=8, m=14, seed=0, dtype=torch.float64) -> QPBatch:
    g = torch.Generator().manual_seed(seed)
    M = torch.randn(n, n, generator=g, dtype=dtype)
    P = M @ M.T / n + 0.1 * torch.eye(n, dtype=dtype)
    A = torch.randn(m, n, generator=g, dtype=dtype)
    lo = torch.full((B, m), -1.0, dtype=dtype)
    return QPBatch(P, torch.randn(B, n, generator=g, dtype=dtype), A, lo, -lo)


def test_the_schur_solve_matches_the_reduced_kkt_solve_for_active_sets_of_any_size():
    qp = _batch()
    g = torch.Generator().manual_seed(1)
    active = torch.rand(qp.batch, qp.m, generator=g) < 0.4
    active[0] = False  # no active row
    active[1, :] = False
    active[1, :qp.n] = True  # as many rows as variables
    r1 = torch.randn(qp.batch, qp.n, generator=g, dtype=qp.q.dtype)
    r2 = torch.randn(qp.batch, qp.m, generator=g, dtype=qp.q.dtype)
    schur = Schur.of(qp, {})
    assert schur is not None
    u, v, f = solve_active(qp, active, r1, r2, 1, schur=schur)
    u_ref, v_ref, _ = solve_active(qp, active, r1, r2, 8, {})
    assert torch.allclose(u, u_ref, atol=1e-8) and torch.allclose(v, v_ref, atol=1e-7)
    assert bool((v[~active] == 0).all())
    assert float((qp.Px(u) + qp.ATy(v) - r1).abs().max()) < 1e-10
    assert float(((qp.Ax(u) - r2) * active).abs().max()) < 1e-8
    # the factor serves a second solve with the same rows (as the backward reuses it)
    u2, v2, _ = solve_active(qp, active, 2 * r1, 2 * r2, 1, schur=schur, lin=f)
    assert torch.allclose(u2, 2 * u, atol=1e-10)


def test_dependent_active_rows_still_solve_stationarity():
    qp = _batch(B=2, n=4, m=10, seed=2)
    active = torch.ones(2, 10, dtype=torch.bool)  # 10 rows on 4 variables
    r1 = torch.randn(2, 4, dtype=qp.q.dtype)
    u, v, _ = solve_active(qp, active, r1, torch.zeros(2, 10, dtype=qp.q.dtype), 1,
                           schur=Schur.of(qp, {}))
    assert torch.isfinite(u).all() and torch.isfinite(v).all()
    assert float((qp.Px(u) + qp.ATy(v) - r1).abs().max()) < 1e-8


def test_the_stored_factors_assemble_per_problem_pieces():
    qp = _batch(B=4, seed=3)
    schur = Schur.of(qp, {})
    active = torch.rand(4, qp.m, generator=torch.Generator().manual_seed(4)) < 0.3
    store = SchurFactors(4, qp.m, qp.q)
    for at in (torch.tensor([0, 2]), torch.tensor([1, 3]), torch.tensor([2])):
        store.put(at, schur.factor(active[at]), active[at])  # problem 2 polished twice
    f = store.lookup(active)
    r1 = torch.randn(4, qp.n, dtype=qp.q.dtype)
    r2 = torch.randn(4, qp.m, dtype=qp.q.dtype)
    u, v, _ = solve_active(qp, active, r1, r2, 1, schur=schur, lin=f)
    u_ref, v_ref, _ = solve_active(qp, active, r1, r2, 1, schur=schur)
    assert torch.allclose(u, u_ref, atol=1e-12) and torch.allclose(v, v_ref, atol=1e-12)
    assert store.lookup(~active) is None


def test_the_schur_path_is_declined_without_a_shared_definite_p():
    qp = _batch()
    lp = QPBatch(torch.zeros_like(qp.P), qp.q, qp.A, qp.lo, qp.hi)
    per = QPBatch(qp.P.expand(qp.batch, -1, -1), qp.q, qp.A, qp.lo, qp.hi)
    assert Schur.of(lp, {}) is None and Schur.of(per, {}) is None
    work: dict = {}
    assert Schur.of(qp, work) is Schur.of(_batch(), work)  # cached for equal P and A


def test_float32_schur_solve_with_refinement():
    qp = _batch(dtype=torch.float32, seed=5)
    active = torch.rand(qp.batch, qp.m, generator=torch.Generator().manual_seed(6)) < 0.3
    r1 = torch.randn(qp.batch, qp.n)
    r2 = torch.randn(qp.batch, qp.m)
    u, v, _ = solve_active(qp, active, r1, r2, 3, schur=Schur.of(qp, {}))
    ref = solve_active(qp.to(torch.float64), active, r1.double(), r2.double(), 8, {})
    assert float((u.double() - ref[0]).abs().max()) < 1e-3
