"""The LP/MILP/QP standard form and its recorded maps from predicted params θ: plugging θ into
c_theta / c0_theta / row_theta / a_theta must reproduce the model with θ as plain data."""

from __future__ import annotations

import numpy as np
import pytest
from _helpers import bind

import dfl_dsl as dfl
from dfl_dsl.compile.bridges import build_linear

TEMPLATE = """
set I; set K;
param c{I} %(p)s; param b{K} %(p)s; param a{K, I} %(p)s;
param w{K, I} >= 0;
var x{I} in [0, 1];
%(sense)s f: sum{i in I} c[i] * x[i] + 2 * c["i0"] + 1;
subject to r{k in K}: sum{i in I} (w[k, i] + a[k, i]) * x[i] <= b[k] + 1;
subject to s{k in K}: b[k] <= sum{i in I} x[i] + 0.5 * a[k, "i1"];
subject to t: x["i0"] >= b["k0"] - 5;
"""


def _case(seed: int, sense: str):
    rng = np.random.default_rng(seed)
    data = {"I": [f"i{j}" for j in range(4)], "K": ["k0", "k1", "k2"],
            "w": rng.uniform(0, 1, (3, 4)).tolist()}
    theta = {"c": rng.normal(size=4).tolist(), "b": rng.uniform(0.5, 2, 3).tolist(),
             "a": rng.normal(scale=0.3, size=(3, 4)).tolist()}
    predicted = dfl.parse(TEMPLATE % {"p": ": predicted", "sense": sense}, "p.opt")
    plain = dfl.parse(TEMPLATE % {"p": "", "sense": sense}, "d.opt")
    return predicted, plain, data, theta


@pytest.mark.parametrize("sense", ["minimize", "maximize"])
@pytest.mark.parametrize("seed", [0, 1])
def test_theta_maps_reproduce_the_plain_model(seed, sense):
    predicted, plain, data, theta = _case(seed, sense)
    inst = predicted.bind(data)
    form = build_linear(inst, reduce=False)
    ref = build_linear(plain.bind({**data, **theta}), reduce=False)
    assert form.n_theta == 4 + 3 + 12 and form.theta_in_constraints
    vec = np.concatenate([np.ravel(theta[e.name]) for e in inst.thetas])
    c, c0 = form.objective_at(vec)
    assert form.sign == ref.sign
    assert np.allclose(c, ref.c) and c0 == pytest.approx(ref.c0)
    A, rl, ru = form.rows_at(vec)
    assert np.allclose(A.toarray(), ref.A.toarray())
    assert np.allclose(rl, ref.rl) and np.allclose(ru, ref.ru)


@pytest.mark.parametrize("sense", ["minimize", "maximize"])
def test_solving_with_theta_in_the_data_matches_the_plain_model(sense):
    predicted, plain, data, theta = _case(2, sense)
    ours = predicted.bind({**data, **theta}).solve("highs")
    ref = plain.bind({**data, **theta}).solve("highs")
    assert ours.status == ref.status == "optimal"
    assert ours.objective == pytest.approx(ref.objective, rel=1e-9, abs=1e-9)


def test_solving_without_theta_is_a_clear_error():
    predicted, _, data, _ = _case(0, "minimize")
    with pytest.raises(dfl.DflError, match="predicted param `c` has no value"):
        predicted.bind(data).solve("highs")


def test_objective_at_without_theta_is_the_base():
    predicted, _, data, _ = _case(0, "minimize")
    form = predicted.bind(data).linear_form()
    c, c0 = form.objective_at(None)
    assert c is form.c and c0 == form.c0 == pytest.approx(1.0)


def test_rows_holding_theta_are_not_turned_into_bounds():
    predicted, plain, data, theta = _case(0, "minimize")
    assert predicted.bind(data).linear_form().m == 7  # r, s and t
    assert plain.bind({**data, **theta}).linear_form().m == 6  # t became a bound on x[i0]


def test_quadratic_objective():
    inst = bind("""param n : int; param P[n, n] psd; param q[n] : predicted;
                   var x[n]; minimize f: 0.5 * quad_form(x, P) + q @ x + 3;""",
                {"n": 2, "P": [[2, 0.5], [0.5, 1]]})
    form = inst.linear_form()
    assert form.is_qp and np.allclose(form.P.toarray(), [[2, 0.5], [0.5, 1]])
    assert np.allclose(form.c_theta.toarray(), np.eye(2)) and form.c0 == 3
    # ½ xᵀPx + qᵀx at x = (1, 2), q = (1, -1)
    x = np.array([1.0, 2.0])
    c, c0 = form.objective_at(np.array([1.0, -1.0]))
    assert 0.5 * x @ form.P @ x + c @ x + c0 == pytest.approx(0.5 * (2 + 2 + 4) - 1 + 3)


def test_integer_flags_and_bounds():
    inst = bind("set I; var x{I} binary; var y integer >= -2 <= 7; var z >= 0;"
                "minimize f: sum{i in I} x[i] + y + z;", {"I": [1, 2]})
    form = inst.linear_form()
    assert form.integer.tolist() == [True, True, True, False] and form.is_mip
    assert form.lb.tolist() == [0, 0, -2, 0] and form.ub.tolist() == [1, 1, 7, np.inf]


def test_quadratic_constraints_are_refused_by_the_linear_form():
    """... at the constraint (`dfl train` on a model with a risk budget said where not)."""
    inst = bind("var x; var y; minimize f: x + y;\nsubject to c: x^2 + y^2 <= 1;")
    with pytest.raises(dfl.DflError, match="quadratic") as info:
        inst.linear_form()
    assert info.value.filename == "m.opt"
    assert (info.value.pos.line, info.value.pos.column) == (2, 12)


def test_row_names_cover_every_row():
    inst = bind("set I; var x{I}; subject to a{i in I}: x[i] + 1 >= 0;"
                "subject to b: sum{i in I} x[i] <= 4;", {"I": [1, 2, 3]})
    form = build_linear(inst, reduce=False)
    assert form.row_names == [("a", 0, 3), ("b", 3, 1)]
    assert form.rl[:3].tolist() == [-1, -1, -1] and form.ru[3] == 4


def test_relabel_columns_is_the_fancy_column_index():
    """The per-block split of [x; θ; aux] columns by one pass over the entries (used for
    blocks with few entries for their width) gives scipy's fancy index."""
    import scipy.sparse as sp

    from dfl_dsl.compile.linear import _relabel_columns

    rng = np.random.default_rng(1)
    width, nx = 60, 25
    m = sp.random_array((40, width), density=0.1, format="csr", rng=rng)
    var_of = np.full(width, -1)
    x_cols = np.concatenate([np.arange(nx), np.arange(40, width)])
    var_of[x_cols] = np.arange(len(x_cols))
    theta_of = np.full(width, -1)
    theta_of[nx:40] = np.arange(40 - nx)
    for new_of, picked in ((var_of, x_cols), (theta_of, np.arange(nx, 40))):
        ours = _relabel_columns(m, new_of, len(picked))
        np.testing.assert_array_equal(ours.toarray(), m[:, picked].toarray())
        assert ours.has_sorted_indices
