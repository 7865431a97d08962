"""The batched HiGHS oracle: the same answers as a fresh solve, in parallel as serially, costs in
the canonical minimized space, and clear refusals of models it can't serve."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from _helpers import bind
from _learn_helpers import EXAMPLES, PICK_MIN, PICK_PROFIT, QP_COST, QP_MIN

import dfl_dsl as dfl
from dfl_dsl.errors import DflError
from dfl_dsl.generators import knapsack
from dfl_dsl.learn.oracle import Oracle


def _fresh(model, instance: dict, name: str, values: np.ndarray):
    """`inst.solve("highs")` with the predicted param given by the data."""
    return model.bind({**instance, name: values.tolist()}).solve("highs")


def test_solve_matches_a_fresh_solve_shortest_path(sp_inst, sp_generated):
    oracle = Oracle(sp_inst)
    costs = sp_generated.targets["cost"][:4].astype(float)
    batch = oracle.solve_theta(costs)
    model = sp_inst.model
    for row, cost in enumerate(costs):
        sol = _fresh(model, sp_generated.instance, "cost", cost)
        assert sol.status == "optimal"
        np.testing.assert_allclose(batch.w[row, : oracle.form.n_model],
                                   np.asarray(sol.value("flow")), atol=1e-7)
        assert batch.objective[row] == pytest.approx(sol.objective, rel=1e-9)
    assert oracle.solver_calls == len(costs)


def test_solve_matches_a_fresh_solve_maximize_mip():
    data = knapsack(num_data=3, num_items=8, dim=2, deg=2, noise_width=0.2, seed=4, capacity=12)
    model = dfl.load(EXAMPLES / "knapsack" / "knapsack.opt")
    inst = model.bind(data.instance)
    oracle = Oracle(inst)
    assert oracle.form.sign == -1.0 and oracle.form.is_mip
    values = data.targets["value"].astype(float)
    batch = oracle.solve_theta(values)
    for row, value in enumerate(values):
        sol = _fresh(model, data.instance, "value", value)
        np.testing.assert_allclose(batch.w[row, :8], np.asarray(sol.value("pick")), atol=1e-7)
        # the canonical objective is minimized: the model's value negated (no constant here)
        model_value = oracle.form.sign * (batch.objective[row] + oracle.constant(value[None])[0])
        assert model_value == pytest.approx(sol.objective, rel=1e-9)
        assert sol.objective > 0


def test_two_processes_give_the_same_answers_as_one(sp_inst, sp_generated):
    costs = sp_generated.targets["cost"][:12].astype(float)
    serial = Oracle(sp_inst, processes=1)
    parallel = Oracle(sp_inst, processes=2)
    try:
        a, b = serial.solve_theta(costs), parallel.solve_theta(costs)
        assert parallel.solver._workers is not None  # the batch really went to the worker pool
        np.testing.assert_allclose(a.w, b.w, atol=1e-9)
        np.testing.assert_allclose(a.objective, b.objective, rtol=1e-12)
        assert parallel.solver_calls == serial.solver_calls == len(costs)
    finally:
        parallel.close()
    assert parallel.solver._workers is None


@pytest.mark.parametrize("processes", [1, 2])
def test_no_solution_is_a_clear_error_serially_and_in_parallel(processes):
    inst = bind("param c : predicted; var x >= 0; var y in [0, 1]; minimize f: c * x + y;")
    oracle = Oracle(inst, processes=processes)
    try:
        costs = np.array([[1.0, 1.0], [-1.0, 1.0], [1.0, 1.0], [1.0, 1.0]])  # row 2: unbounded
        with pytest.raises(DflError, match="no solution \\(status unbounded\\)"):
            oracle.solve(costs)
    finally:
        oracle.close()


def test_costs_are_canonical_and_differentiable():
    inst = bind(PICK_PROFIT, {"I": [1, 2, 3]})
    oracle = Oracle(inst)
    theta = torch.tensor([[1.0, 2.0, 5.0]], dtype=torch.float64, requires_grad=True)
    costs = oracle.costs(theta)
    np.testing.assert_allclose(costs.detach().numpy(), [[-1.0, -2.0, -5.0]])  # maximize: negated
    costs.sum().backward()
    np.testing.assert_allclose(theta.grad.numpy(), [[-1.0, -1.0, -1.0]])
    batch = oracle.solve_theta(theta)
    np.testing.assert_allclose(batch.w, [[0, 0, 1]], atol=1e-9)
    assert batch.objective[0] == pytest.approx(-5.0)
    np.testing.assert_allclose(oracle.constant(np.zeros((2, 3))), [0.0, 0.0])


def test_the_pool_keeps_each_distinct_solution_once():
    oracle = Oracle(bind(PICK_MIN, {"I": [1, 2, 3]}))
    oracle.solve(np.array([[1.0, 2.0, 3.0], [1.5, 2.0, 3.0], [3.0, 1.0, 2.0]]))
    pool = oracle.pool_array()
    assert pool.shape == (2, 3)
    np.testing.assert_allclose(sorted(pool.tolist()), [[0, 1, 0], [1, 0, 0]], atol=1e-9)


def test_non_finite_costs_never_reach_the_solver():
    """A user's error, not an internal one: a test set's features the trained weights
    overflow on reach the oracle this way (the trainer stops a diverging run before)."""
    oracle = Oracle(bind(PICK_MIN, {"I": [1, 2, 3]}))
    with pytest.raises(DflError, match=r"predictor's outputs are not finite"):
        oracle.solve(np.array([[1.0, np.nan, 3.0]]))
    assert oracle.solver_calls == 0


@pytest.mark.parametrize(("text", "data", "words"), [
    ("param c; var x in [0, 1]; minimize f: c * x;", {"c": 1.0}, "no `predicted` param"),
    ("param c : predicted; param b : predicted; var x in [0, 5]; minimize f: c * x; "
     "s.t. r: x >= b;", {}, "enters constraint `r`"),
    ("param c : predicted; var x integer in [-1, 1]; minimize f: x^2 + c * x;", {},
     "mixed-integer QP"),
], ids=["no-predicted", "predicted-in-constraints", "miqp"])
def test_refuses_models_it_cannot_serve(text, data, words):
    inst = bind(text, data)
    with pytest.raises(DflError, match=words) as info:
        Oracle(inst)
    assert info.value.filename == "m.opt"


def test_a_predicted_param_in_a_constraint_is_refused_where_it_is_written():
    """The refusal named neither the param nor the constraint and had no position."""
    inst = bind("set T; param d{T} : predicted; param c{T};\nvar x{T} >= 0; var s{T} >= 0;\n"
                "minimize f: sum{t in T} c[t] * x[t];\n"
                "s.t. bal{t in T}: s[t] == x[t] - d[t];", {"T": [1, 2], "c": [1, 2]})
    with pytest.raises(DflError, match="predicted param `d` enters constraint `bal`") as info:
        Oracle(inst)
    assert (info.value.pos.line, info.value.pos.column) == (4, 34)
    assert "objective" in info.value.hint


IDLE = ("set P; param cost{P}; param g{P} : predicted;\nparam h : predicted;\n"
        "var x{P} in [0, 1];\nminimize f: sum{p in P} %s * x[p] + h;\n"
        "s.t. one: sum{p in P} x[p] == 1;")


def test_a_predicted_param_that_changes_no_decision_is_refused_or_named():
    """The objective names the data param `cost` where `g` was meant: training ran to a regret
    of 0.0000 whatever it predicted. `h`, a constant, changes no decision either."""
    data = {"P": [1, 2], "cost": [1, 2]}
    with pytest.raises(DflError, match="predicted params `g`, `h` multiply no variable") as info:
        Oracle(bind(IDLE % "cost[p]", data))
    assert (info.value.pos.line, info.value.pos.column) == (1, 29)
    assert "training would learn nothing" in str(info.value)
    with pytest.warns(dfl.errors.DataWarning, match=r"m.opt:2:7: warning: predicted param `h`"):
        oracle = Oracle(bind(IDLE % "g[p]", data))
    assert oracle.n_theta == 3


def test_an_unbounded_training_solve_is_located_at_a_variable_it_pushes():
    """Bounded for positive costs, unbounded once a prediction turns one negative: the error
    was 'the oracle found no solution (status unbounded)' at the file."""
    inst = bind("set P; param g{P} : predicted;\nvar x{P} >= 0;\n"
                "minimize f: sum{p in P} g[p] * x[p];\ns.t. lo: sum{p in P} x[p] >= 1;",
                {"P": ["a", "b"]})
    oracle = Oracle(inst)
    assert oracle.solve(np.array([[1.0, 2.0]])).w.tolist() == [[1.0, 0.0]]
    with pytest.raises(DflError, match="`x\\[b\\]` has no upper bound") as info:
        oracle.solve(np.array([[1.0, 2.0], [1.0, -0.5]]))
    assert (info.value.pos.line, info.value.pos.column) == (2, 5)
    assert "finite bounds" in info.value.hint


def test_a_convex_qp_is_served_with_its_quadratic_part_in_every_objective():
    """x_i = clip(-c_i/2, -1, 1): the decisions and x² + cx by hand; the pool's best point
    under a cost is judged by the whole objective, not cᵀw alone."""
    oracle = Oracle(bind(QP_MIN, {"I": [1, 2, 3]}))
    assert oracle.is_qp and oracle.method == "highs"
    batch = oracle.solve(np.array([QP_COST]))
    np.testing.assert_allclose(batch.w, [[-0.5, 1.0, -0.25]], atol=1e-6)
    assert batch.objective[0] == pytest.approx(-3.3125, abs=1e-6)
    oracle.seed_pool(np.array([[0.0, 0.0, 0.0], [1.0, 1.0, 1.0]]))
    # c = -1.5: (1,1,1) scores -1.5, (0,0,0) 0, the solved point 0.9375; c = -0.5: (1,1,1)
    # has the least cᵀw (-1.5) but x² + cx = 1.5, against 0 for (0,0,0)
    best = oracle.pool_decisions(torch.tensor([[-1.5, -1.5, -1.5], [-0.5, -0.5, -0.5]]))
    np.testing.assert_allclose(best.numpy(), [[1, 1, 1], [0, 0, 0]], atol=1e-6)


def test_a_convex_model_is_refused_with_a_hint_training_can_follow():
    """The compile error's hint was `use --backend cvxpy`, an option `dfl train` lacks."""
    inst = bind("param n : int; param r[n] : predicted; var w[n] >= 0; maximize f: r @ w;"
                "s.t. b: sum(w) == 1; s.t. q: sum_squares(w) <= 0.5;", {"n": 3})
    with pytest.raises(DflError, match="a convex QP: constraint `q` is quadratic") as info:
        Oracle(inst)
    assert "--backend" not in info.value.hint and "cvxpylayers" in info.value.hint
    assert info.value.filename == "m.opt" and "an LP, a MILP" in str(info.value)


def test_predicted_params_over_empty_sets_are_named():
    """A 1x1 grid has no arcs: `cost` has no entries, which read as 'no predicted param'."""
    inst = bind("set I; param c{I} : predicted; var x{I} in [0, 1];"
                "minimize f: sum{i in I} c[i] * x[i];", {"I": []})
    with pytest.raises(DflError, match="`c`\\) have no entries"):
        Oracle(inst)


def test_worker_processes_solve_milps_after_the_parent_has():
    """Workers start fresh: forked after the parent's HiGHS ran a MILP (its thread pool
    started), their MILP solves used to crawl or hang."""
    data = knapsack(num_data=8, num_items=12, dim=2, deg=2, noise_width=0.2, seed=5)
    inst = dfl.load(EXAMPLES / "knapsack" / "knapsack.opt").bind(data.instance)
    values = data.targets["value"].astype(float)
    serial = Oracle(inst, method="highs")
    expected = serial.solve_theta(values)  # the parent's HiGHS runs MILPs first
    parallel = Oracle(inst, method="highs", processes=2)
    try:
        got = parallel.solve_theta(values)
        assert parallel.solver._workers is not None
        np.testing.assert_allclose(got.objective, expected.objective, rtol=1e-9)
    finally:
        parallel.close()


@pytest.mark.parametrize(("text", "status", "words"), [
    ("set I; param c{I} : predicted; var x{I} >= 0; minimize f: sum{i in I} c[i] * x[i];",
     "unbounded", "finite bounds"),
    ("set I; param c{I} : predicted; var x{I} in [0, 1]; minimize f: sum{i in I} c[i] * x[i];"
     "s.t. r: sum{i in I} x[i] >= 5;", "infeasible", "dfl solve"),
], ids=["unbounded", "infeasible"])
def test_a_failed_solve_names_the_model_and_why(text, status, words):
    oracle = Oracle(bind(text, {"I": [1, 2]}), method="highs")
    with pytest.raises(DflError, match=f"status {status}") as info:
        oracle.solve(np.array([[-1.0, 1.0]]))
    assert info.value.filename == "m.opt" and words in info.value.hint


def test_a_model_with_predicted_and_uncertain_params_says_so():
    """It read 'the decision-focused losses need an LP or MILP: uncertain param `d` has no
    scenarios in the data', with a hint about convex models."""
    inst = bind("param n : int; param r[n] : predicted; param d[n] : uncertain;"
                "var w[n] in [0, 1]; maximize f: r @ w + mean(d @ w); s.t. b: sum(w) == 1;",
                {"n": 3})
    with pytest.raises(DflError, match="both `predicted` and `uncertain` params") as info:
        Oracle(inst)
    assert info.value.filename == "m.opt" and "an LP, a MILP" not in str(info.value)


def test_a_solution_enters_the_pool_once_whatever_the_sign_of_its_zeros(pick_min):
    # a solver's -0.0 and 0.0 are the same solution; keyed by their bytes they were two, so
    # a training set's solutions weighed double in NCE's mean (25 distinct shortest paths in
    # 40 samples made a pool of 40)
    from dfl_dsl.learn.losses import NCE
    from dfl_dsl.learn.oracle import pool_key

    assert pool_key(np.array([-0.0, 1.0, 0.0])) == pool_key(np.array([0.0, 1.0, -1e-12]))
    loss_fn = NCE(pick_min)
    loss_fn.seed_pool(np.array([[0.0, 1.0, 0.0], [-0.0, 1.0, -0.0]]))
    loss_fn.oracle.decisions(torch.tensor([[1.0, 0.0, 1.0]]))  # w = e2 again
    assert len(loss_fn.oracle.pool) == 1
