"""The batched LP solver: certified optima equal to HiGHS's, by both methods, on shared and
per-sample data, and never a certificate for what is not optimal."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from _lp_helpers import batch_of, form_of, highs_optima, random_form

from dfl_dsl.backends.batchlp import BatchLP, RowOperator, Settings, solve_batch


@pytest.mark.parametrize("method", ["ipm", "pdhg"])
def test_random_lps_match_highs(rng, method):
    for m, n in ((6, 10), (15, 12), (30, 40)):
        form = random_form(rng, m, n)
        costs = rng.normal(size=(24, n))
        statuses, expected = highs_optima(form, costs)
        assert statuses == ["optimal"] * len(costs)
        result = solve_batch(batch_of(form, costs), Settings(method=method))
        assert bool(result.certified.all()), (m, n, method)
        np.testing.assert_allclose(result.objective.numpy(), expected, rtol=1e-9, atol=1e-9)
        x = result.x.numpy()
        assert np.all(x >= form.lb - 1e-9) and np.all(x <= form.ub + 1e-9)
        activity = x @ form.A.toarray().T
        assert np.all(activity >= form.rl - 1e-9) and np.all(activity <= form.ru + 1e-9)


def test_degenerate_network_vertices_are_exact(rng):
    """A 4×4 grid's shortest paths: every vertex is degenerate (a path uses few arcs of a
    spanning tree); the decisions are the 0/1 path, not an interior point of a face."""
    side = 4
    nodes = side * side
    arcs = [(r * side + c, r * side + c + 1) for r in range(side) for c in range(side - 1)]
    arcs += [(r * side + c, (r + 1) * side + c) for r in range(side - 1) for c in range(side)]
    A = np.zeros((nodes, len(arcs)))
    for j, (u, v) in enumerate(arcs):
        A[u, j], A[v, j] = -1.0, 1.0
    rhs = np.zeros(nodes)
    rhs[0], rhs[-1] = -1.0, 1.0
    form = form_of(A, rhs, rhs, np.zeros(len(arcs)), np.ones(len(arcs)))
    costs = rng.uniform(0.1, 2.0, (50, len(arcs)))
    _, expected = highs_optima(form, costs)
    for method in ("ipm", "pdhg"):
        result = solve_batch(batch_of(form, costs), Settings(method=method))
        assert bool(result.certified.all())
        np.testing.assert_allclose(result.objective.numpy(), expected, rtol=1e-12)
        x = result.x.numpy()
        np.testing.assert_array_equal(x, np.round(x))  # exactly 0 or 1


def test_per_sample_matrix_values_and_row_bounds(rng):
    """Gen-DFL's scenario problems: K's values and the row bounds differ per sample."""
    form = random_form(rng, 8, 10)
    coo = form.A.tocoo()
    b = 12
    values = coo.data * rng.uniform(0.8, 1.2, (b, coo.nnz))
    costs = rng.normal(size=(b, 10))
    shift = rng.uniform(-0.05, 0.05, (b, form.m))
    expected = []
    for i in range(b):
        Ai = form.A.tocoo().copy()
        Ai.data = values[i]
        # the box through `point` may move: keep every sample feasible by relaxing the rows
        fi = form_of(Ai.toarray(), form.rl + shift[i] - 0.5, form.ru + shift[i] + 0.5,
                     form.lb, form.ub)
        expected.append(highs_optima(fi, costs[i : i + 1])[1][0])
    f = lambda a: torch.as_tensor(a, dtype=torch.float64)  # noqa: E731
    K = RowOperator(f(coo.row).long(), f(coo.col).long(), f(values), form.A.shape)
    lp = BatchLP(K, f(costs), f(form.rl + shift - 0.5), f(form.ru + shift + 0.5), f(form.lb),
                 f(form.ub))
    for method in ("ipm", "pdhg"):
        result = solve_batch(lp, Settings(method=method))
        assert bool(result.certified.all())
        np.testing.assert_allclose(result.objective.numpy(), expected, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("method", ["ipm", "pdhg"])
def test_infeasible_and_unbounded_are_never_certified(method):
    # x1 + x2 >= 3 with x in [0, 1]: infeasible; min -x with x >= 0: unbounded
    infeasible = form_of(np.array([[1.0, 1.0]]), [3.0], [np.inf], [0, 0], [1, 1])
    unbounded = form_of(np.array([[1.0, -1.0]]), [0.0], [np.inf], [0, 0], [np.inf, np.inf])
    settings = Settings(method=method, max_iterations=2000, ipm_iterations=60)
    for form, costs in ((infeasible, [[1.0, 1.0]]), (unbounded, [[-1.0, 0.0]])):
        result = solve_batch(batch_of(form, np.array(costs)), settings)
        assert not bool(result.certified.any())


def test_warm_start_of_the_same_costs_needs_no_iteration(rng):
    form = random_form(rng, 10, 14)
    costs = rng.normal(size=(16, 14))
    lp = batch_of(form, costs)
    first = solve_batch(lp, Settings(method="pdhg"))
    again = solve_batch(lp, Settings(method="pdhg"), x0=first.x, y0=first.y, tight0=first.tight)
    assert bool(again.certified.all())
    assert int(again.iterations.max()) == 0
    np.testing.assert_allclose(again.objective.numpy(), first.objective.numpy(), rtol=1e-12)


def test_integer_columns_of_an_integral_relaxation_come_out_integral():
    # an assignment: 3 workers × 3 jobs, each once
    n = 9
    A = np.zeros((6, n))
    for w in range(3):
        for j in range(3):
            A[w, 3 * w + j] = 1.0
            A[3 + j, 3 * w + j] = 1.0
    form = form_of(A, np.ones(6), np.ones(6), np.zeros(n), np.ones(n), np.ones(n, bool))
    costs = np.random.default_rng(3).uniform(1, 5, (20, n))
    _, expected = highs_optima(form, costs)
    result = solve_batch(batch_of(form, costs), integer=torch.ones(n, dtype=torch.bool))
    assert bool(result.certified.all())
    np.testing.assert_allclose(result.objective.numpy(), expected, rtol=1e-12)
    assert set(np.unique(result.x.numpy())) <= {0.0, 1.0}


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
@pytest.mark.parametrize("method", ["ipm", "pdhg"])
def test_cuda_gives_the_cpu_optima(rng, method):
    """On a GPU: float32 PDHG blocks in a CUDA graph, float64 polishing, same certified
    optima as on the CPU."""
    form = random_form(rng, 20, 30)
    costs = rng.normal(size=(64, 30))
    cpu = solve_batch(batch_of(form, costs), Settings(method=method))
    lp = batch_of(form, costs)
    cuda = BatchLP(RowOperator.from_scipy(form.A, device="cuda"), lp.c.cuda(), lp.rl.cuda(),
                   lp.ru.cuda(), lp.lb.cuda(), lp.ub.cuda())
    result = solve_batch(cuda, Settings(method=method))
    assert bool(result.certified.all())
    np.testing.assert_allclose(result.objective.cpu().numpy(), cpu.objective.numpy(),
                               rtol=1e-9, atol=1e-9)
    if method == "pdhg":
        assert result.graph_captured


def test_tied_costs_on_an_integer_model_never_give_a_fractional_answer():
    """Two equally short paths: the interior-point method ends between them (optimal, not
    integral); with integer columns such a sample is left uncertified, for HiGHS."""
    # 0 -> 1 -> 3 and 0 -> 2 -> 3, each of cost 2
    A = np.array([[-1, -1, 0, 0], [1, 0, -1, 0], [0, 1, 0, -1], [0, 0, 1, 1]], dtype=float)
    rhs = np.array([-1.0, 0.0, 0.0, 1.0])
    form = form_of(A, rhs, rhs, np.zeros(4), np.ones(4), np.ones(4, bool))
    costs = np.array([[1.0, 1.0, 1.0, 1.0], [1.0, 2.0, 1.0, 1.0]])
    result = solve_batch(batch_of(form, costs), integer=torch.ones(4, dtype=torch.bool))
    x = result.x.numpy()
    for row, certified in enumerate(result.certified.tolist()):
        if certified:
            np.testing.assert_array_equal(x[row], np.round(x[row]))
    assert bool(result.certified[1])  # the untied one is solved
