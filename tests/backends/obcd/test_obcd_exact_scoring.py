"""OBCD pairs with a majorized model whose stalled pairs are rescued by the exact change
(Kronecker-quadratic f, L0 or X >= 0): the closed-form exact coefficients, the step against
the true change of F and against the majorized pick, and X >= 0 models whose feasible points
are permutation matrices (n = r), where the majorized pick alone stopped at points a swap
improves, against brute force over all permutations."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch
from _helpers import bind

from dfl_dsl.backends.obcd import obcd
from dfl_dsl.backends.obcd.model import KronModel, kron_coefficients, pair_coefficients
from dfl_dsl.backends.obcd.pair import h_rows, rotate, solve_pairs, trig
from dfl_dsl.backends.obcd.solver import disjoint_support
from dfl_dsl.compile.stiefel import KronQuadratic, build_stiefel

T = torch.float64



@pytest.mark.parametrize("weighted", [False, True])
def test_closed_form_exact_coefficients_match_the_general_ones(weighted):
    g = torch.Generator().manual_seed(1)
    P, r = 30, 5
    x, y, gx, gy = (torch.randn(P, r, dtype=T, generator=g) for _ in range(4))
    M = torch.randn(P, 2, 2, dtype=T, generator=g)
    M = M + M.transpose(1, 2)
    R = None
    if weighted:
        R = torch.randn(r, r, dtype=T, generator=g)
        R = R + R.T
    assert torch.allclose(kron_coefficients(x, y, gx, gy, M, R),
                          pair_coefficients(x, y, gx, gy, M, R), atol=1e-12)


def _quadratic(n, r, seed, weighted):
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((n, n))
    R = np.diag(rng.uniform(0.3, 2.0, r)) if weighted else np.eye(r)
    return KronQuadratic(A + A.T, R, rng.standard_normal((n, r)), 0.0), rng


@pytest.mark.parametrize(("l1", "l0", "nonneg"), [
    (0.4, 0.0, False), (0.0, 0.3, False), (0.0, 0.0, True), (0.3, 0.0, True),
    (0.0, 0.0, False)], ids=["L1", "L0", "nonneg", "L1+nonneg", "h=0"])
@pytest.mark.parametrize("weighted", [False, True])
def test_a_pair_the_majorizer_keeps_in_place_takes_the_exact_best(l1, l0, nonneg, weighted):
    n, r = 24, 4
    smooth, rng = _quadratic(n, r, int(10 * l1 + 100 * l0 + nonneg), weighted)
    X = np.linalg.qr(rng.standard_normal((n, r)))[0]
    if nonneg:
        X = disjoint_support(X)
    model = KronModel(smooth, torch.tensor(X), majorize=True)
    perm = torch.as_tensor(rng.permutation(n))
    p, q = perm[: n // 2], perm[n // 2:]
    search, exact = model.coefficients(p, q, score=True)
    assert exact is not None and model.coefficients(p, q)[1] is None
    x, y = model.X[p], model.X[q]
    step = solve_pairs(x, y, search, l1, l0, nonneg, exact)
    plain = solve_pairs(x, y, search, l1, l0, nonneg)
    h_now = h_rows(torch.cat([x, y], -1), l1, l0, nonneg)

    def exact_change(s):
        fam = s.reflect.long()
        nx, ny = rotate(x, y, s.theta, s.reflect)
        return (trig(exact[fam, torch.arange(len(p))], s.theta[:, None])[:, 0]
                + h_rows(torch.cat([nx, ny], -1), l1, l0, nonneg) - h_now)

    F = lambda Z: smooth.value(Z) + float(h_rows(torch.tensor(Z).reshape(-1), l1, l0, nonneg))  # noqa: E731
    true = []
    for i in range(len(p)):
        Y = X.copy()
        Y[int(p[i])], Y[int(q[i])] = step.x[i].numpy(), step.y[i].numpy()
        true.append(F(Y) - F(X))
    true = torch.tensor(true, dtype=T)
    if not (l0 or nonneg):  # L1 alone or h = 0: the majorized pick stands
        assert torch.equal(step.theta, plain.theta) and torch.equal(step.delta, plain.delta)
        assert torch.all(true <= step.delta + 1e-9) and torch.any(step.delta < 0)
        return
    # pairs the majorized pick moves keep that move, whose change it bounds ...
    moved = plain.delta < 0
    assert torch.equal(step.theta[moved], plain.theta[moved])
    assert torch.equal(step.delta[moved], plain.delta[moved])
    assert torch.all(true[moved] <= step.delta[moved] + 1e-9)
    # ... and the pairs it keeps in place take the best candidate by the exact change, which
    # is what F's change then is (never positive: staying is a candidate)
    assert torch.allclose(true[~moved], step.delta[~moved], atol=1e-9)
    assert torch.allclose(exact_change(step)[~moved], step.delta[~moved], atol=1e-10)
    assert torch.all(step.delta[~moved] <= 0)


_PERM = """
param n : int;
param C[n, n];
param D[n, n];
param G[n, n];
var X[n, n] >= 0 in stiefel;
minimize loss: 0.5 * trace(X.T @ C @ X @ D) + trace(G.T @ X);
"""


def _permutation_case(kind, n, seed):
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((n, n))
    C = -(A.T @ A) / n if kind == "pca" else A + A.T
    D = np.diag(rng.uniform(0.2, 2.0, n))
    G = rng.standard_normal((n, n)) if kind in ("lin", "pca") else np.zeros((n, n))
    best = min(0.5 * np.trace(P.T @ C @ P @ D) + np.sum(G * P)
               for P in (np.eye(n)[list(s)] for s in itertools.permutations(range(n))))
    return bind(_PERM, {"n": n, "C": C, "D": D, "G": G}), best


@pytest.mark.parametrize(("kind", "n", "seed", "before"), [
    ("qap", 4, 4, 3.973), ("lin", 4, 4, 0.257), ("pca", 5, 1, -2.685)])
def test_nonnegative_permutation_models_reach_the_brute_force_optimum(kind, n, seed, before):
    """n = r with X >= 0: feasible points are permutation matrices and a pair can only stay or
    swap. The majorized pick alone stopped at `before` (its ς‖D‖² over-charged the swaps that
    lower F); the default solve now reaches the optimum over all n! permutations."""
    inst, best = _permutation_case(kind, n, seed)
    sol = inst.solve("obcd", seed=0)
    X = sol.value("X")
    assert sol.objective == pytest.approx(best, abs=1e-9) and best < before - 0.05
    np.testing.assert_allclose(X, np.round(X), atol=1e-12)  # a permutation matrix
    res = obcd(build_stiefel(inst), seed=0, majorize=False)
    assert res.objective == pytest.approx(best, abs=1e-9)
