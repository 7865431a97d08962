"""Training data: features and the predicted params' true values, validated against the model,
with the true decisions and optima filled in by the oracle."""

from __future__ import annotations

import numpy as np
import pytest
from _helpers import bind
from _learn_helpers import PICK_PROFIT

from dfl_dsl.errors import DataError
from dfl_dsl.learn.dataset import DFLData, ScenarioData
from dfl_dsl.learn.oracle import Oracle

TWO = """set I; set J;
param a{I} : predicted;
param g{J, I};
param b[2, 2] : predicted;
var x{I} binary;
var y[2, 2] in [0, 1];
minimize f: sum{i in I} a[i] * x[i] + sum(b * y);
s.t. one: sum{i in I} x[i] == 1;
s.t. two: sum(y) == 1;
"""


@pytest.fixture
def two():
    return bind(TWO, {"I": ["p", "q", "r"], "J": [0], "g": [[1, 1, 1]]})


def test_params_are_stacked_in_declaration_order(two):
    a = np.arange(6.0).reshape(2, 3)
    b = 10 + np.arange(8.0).reshape(2, 2, 2)
    data = DFLData.from_arrays(two, {"features": np.ones((2, 4)), "b": b, "a": a})
    assert len(data) == 2 and data.features.shape == (2, 4)
    np.testing.assert_array_equal(data.theta, np.hstack([a, b.reshape(2, 4)]))
    # the entries may also come flattened per sample
    flat = DFLData.from_arrays(two, {"features": np.ones((2, 4)), "a": a, "b": b.reshape(2, 4)})
    np.testing.assert_array_equal(flat.theta, data.theta)


@pytest.mark.parametrize("shape", [(4, 3), (3, 2, 2), (2, 5), (1, 12), (2,)])
def test_a_wrongly_shaped_param_is_a_data_error(two, shape):
    arrays = {"features": np.ones((2, 4)), "a": np.ones(shape), "b": np.ones((2, 2, 2))}
    with pytest.raises(DataError, match="`a` should have shape \\[2, 3\\]"):
        DFLData.from_arrays(two, arrays, "train.npz")


@pytest.mark.parametrize(("arrays", "words"), [
    ({"a": np.ones((2, 3)), "b": np.ones((2, 4))}, "needs a `features` array"),
    ({"features": np.ones(2), "a": np.ones((2, 3)), "b": np.ones((2, 4))}, "must be N × p"),
    ({"features": np.ones((2, 4)), "a": np.ones((2, 3))}, "no array for predicted param `b`"),
    ({"features": np.ones((2, 4)), "a": np.full((2, 3), np.nan), "b": np.ones((2, 4))},
     "NaN or inf"),
    ({"features": np.full((2, 4), np.inf), "a": np.ones((2, 3)), "b": np.ones((2, 4))},
     r"`features` holds inf \(sample 1\)"),
    # finite, but inf in the predictor's float32 (then non-finite costs reached the solver)
    ({"features": np.array([[1.0] * 4, [1.0, 1.0, -1e308, 1.0]]), "a": np.ones((2, 3)),
      "b": np.ones((2, 4))}, r"`features` holds -1e\+308 \(sample 2\): the predictor "
                             r"computes in float32"),
], ids=["no-features", "features-1d", "missing-param", "nan-param", "inf-features",
        "features-beyond-float32"])
def test_bad_training_data_is_a_data_error(two, arrays, words):
    with pytest.raises(DataError, match=words) as info:
        DFLData.from_arrays(two, arrays, "train.npz")
    assert info.value.filename == "train.npz"


def test_a_model_without_predicted_params_is_a_data_error():
    inst = bind("param c; var x in [0, 1]; minimize f: c * x;", {"c": 1.0})
    with pytest.raises(DataError, match="no `predicted` param"):
        DFLData.from_arrays(inst, {"features": np.ones((2, 4))})


def test_from_npz_round_trip(tmp_path, sp_inst, sp_generated):
    path = tmp_path / "train.npz"
    np.savez(path, **sp_generated.arrays())
    data = DFLData.from_npz(sp_inst, path)
    np.testing.assert_allclose(data.features, sp_generated.features)
    np.testing.assert_allclose(data.theta, sp_generated.targets["cost"])


def test_solved_fills_in_the_true_decisions_and_optima_in_the_models_sense():
    inst = bind(PICK_PROFIT, {"I": [1, 2, 3]})
    data = DFLData.from_arrays(inst, {"features": np.ones((2, 1)),
                                      "c": np.array([[1.0, 5.0, 2.0], [4.0, 0.0, 3.0]])})
    assert data.w is None and data.z is None
    assert data.solved(Oracle(inst)) is data
    np.testing.assert_allclose(data.w, [[0, 1, 0], [1, 0, 0]], atol=1e-9)
    np.testing.assert_allclose(data.z, [5.0, 4.0])  # maximize: the best profit itself
    sub = data.subset(np.array([1]))
    assert len(sub) == 1
    np.testing.assert_allclose(sub.theta, [[4.0, 0.0, 3.0]])
    np.testing.assert_allclose(sub.z, [4.0])
    assert DFLData(data.features, data.theta).subset(np.array([0])).w is None


# ---------------------------------------------------------------------- shapes, sizes, kinds
@pytest.mark.parametrize("b_shape", [(2, 4, 1), (2, 1, 4), (2, 2, 2, 1)])
def test_a_param_in_another_arrangement_of_its_entries_is_a_data_error(two, b_shape):
    """(N, 4, 1) holds b's 4 entries per sample but not in its [2, 2] shape (nor flattened):
    reading it would silently reshuffle them (a transposed array reads as scrambled numbers)."""
    arrays = {"features": np.ones((2, 4)), "a": np.ones((2, 3)), "b": np.ones(b_shape)}
    with pytest.raises(DataError, match=r"`b` should have shape \[2, 2, 2\]"):
        DFLData.from_arrays(two, arrays, "train.npz")


def test_a_transposed_matrix_param_is_a_data_error():
    inst = bind("set I; set J; param a{I, J} : predicted; var x{I, J} in [0, 1];"
                "minimize f: sum{i in I, j in J} a[i, j] * x[i, j];",
                {"I": [0, 1, 2], "J": [0, 1, 2, 3]})
    arrays = {"features": np.ones((5, 2)), "a": np.ones((5, 4, 3))}
    with pytest.raises(DataError, match=r"`a` should have shape \[5, 3, 4\], got \[5, 4, 3\]"):
        DFLData.from_arrays(inst, arrays, "train.npz")


def test_an_empty_training_file_is_a_data_error(two):
    arrays = {"features": np.ones((0, 4)), "a": np.ones((0, 3)), "b": np.ones((0, 2, 2))}
    with pytest.raises(DataError, match="no samples") as info:
        DFLData.from_arrays(two, arrays, "train.npz")
    assert info.value.filename == "train.npz"


@pytest.mark.parametrize("which", ["features", "a"])
def test_non_numeric_arrays_are_a_data_error(two, which):
    arrays = {"features": np.ones((2, 4)), "a": np.ones((2, 3)), "b": np.ones((2, 2, 2))}
    arrays[which] = np.full(arrays[which].shape, "x")
    with pytest.raises(DataError, match=f"`{which}` must hold numbers") as info:
        DFLData.from_arrays(two, arrays, "train.npz")
    assert info.value.filename == "train.npz"


def test_a_scalar_predicted_param_is_hinted_as_one_value_per_sample():
    inst = bind("param c : predicted; var x in [0, 1]; minimize f: c * x;")
    with pytest.raises(DataError) as info:
        DFLData.from_arrays(inst, {"features": np.ones((2, 1))}, "train.npz")
    assert "shape [N]" in str(info.value.hint)


def test_a_model_without_predicted_params_names_the_model_file():
    inst = bind("param c; var x in [0, 1]; minimize f: c * x;", {"c": 1.0}, name="mine.opt")
    with pytest.raises(DataError, match="no `predicted` param") as info:
        DFLData.from_arrays(inst, {"features": np.ones((2, 4))}, "train.npz")
    assert info.value.filename == "mine.opt"


UNC = """param n : int;
param ret[n] : uncertain;
var w[n] in [0, 1];
maximize r: cvar(0.8, ret @ w);
s.t. one: sum(w) == 1;
"""


@pytest.mark.parametrize(("shape", "draws"), [((3, 4), 1), ((3, 5, 4), 5), ((3, 1, 4), 1)])
def test_scenario_data_takes_one_draw_or_s_draws(shape, draws):
    inst = bind(UNC, {"n": 4})
    values = np.arange(np.prod(shape), dtype=float).reshape(shape)
    data = ScenarioData.from_arrays(inst, {"features": np.ones((3, 2)), "ret": values})
    assert data.draws.shape == (3, draws, 4)
    np.testing.assert_array_equal(data.draws.reshape(shape), values)


@pytest.mark.parametrize("shape", [(3, 8), (3, 4, 6), (3, 2, 2, 3)],
                         ids=["S-draws-flattened", "transposed", "reshaped"])
def test_scenario_data_in_another_shape_is_a_data_error(shape):
    """(3, 8) for ret[4] used to read as 2 draws of 4 values (instance data for n = 4 with a
    training file for n = 8 trained silently on the wrong numbers), and a transposed
    (N, n, S) file as S scrambled scenarios."""
    inst = bind(UNC, {"n": 4})
    want = r"`ret` should have shape \[N, 4\] \(one draw per sample\) or \[N, S, 4\] \(S draws\)"
    with pytest.raises(DataError, match=want):
        ScenarioData.from_arrays(inst, {"features": np.ones((3, 2)), "ret": np.ones(shape)},
                                 "train.npz")


def test_a_scalar_uncertain_param_takes_n_or_n_by_s():
    inst = bind("param d : uncertain; var x in [0, 5]; minimize f: mean(d * x - 2 * x);")
    one = ScenarioData.from_arrays(inst, {"features": np.ones((3, 2)), "d": np.ones(3)})
    many = ScenarioData.from_arrays(inst, {"features": np.ones((3, 2)), "d": np.ones((3, 7))})
    assert one.draws.shape == (3, 1, 1) and many.draws.shape == (3, 7, 1)


def test_empty_or_non_numeric_scenario_data_is_a_data_error():
    inst = bind(UNC, {"n": 4})
    with pytest.raises(DataError, match="no samples"):
        ScenarioData.from_arrays(inst, {"features": np.ones((0, 2)), "ret": np.ones((0, 4))})
    with pytest.raises(DataError, match="`ret` must hold numbers"):
        ScenarioData.from_arrays(inst, {"features": np.ones((3, 2)),
                                        "ret": np.full((3, 4), "x")})


def test_scenario_data_beyond_float32_is_a_data_error():
    """The flow computes in float32: a draw of 1e308 (finite in float64) was inf there, and
    its scenarios non-finite at the solver (exit 3)."""
    inst = bind(UNC, {"n": 4})
    draws = np.ones((3, 4))
    draws[1, 2] = 1e308
    with pytest.raises(DataError, match=r"the uncertain params' draws holds 1e\+308 \(sample "
                                        r"2\): the generative model computes in float32"):
        ScenarioData.from_arrays(inst, {"features": np.ones((3, 2)), "ret": draws}, "t.npz")
    with pytest.raises(DataError, match=r"`features` holds nan \(sample 1\)"):
        ScenarioData.from_arrays(inst, {"features": np.full((3, 2), np.nan),
                                        "ret": np.ones((3, 4))}, "t.npz")


# ---------------------------------------------------------------------- declared checks
CHECKED = """set E;
param cap{E};
param c{e in E} : predicted >= 0, <= cap[e];
var x{E} in [0, 1];
minimize f: sum{e in E} c[e] * x[e];
"""


@pytest.mark.parametrize(("bad", "words"), [
    (-0.5, r"`c`\[b\] in sample 3 of train.npz's array `c` \(row 2\): value -0.5 breaks "
           r"`>= 0`"),
    (7.0, r"`c`\[b\] in sample 3 of train.npz's array `c` \(row 2\): value 7 breaks `<= 2`"),
])
def test_training_values_that_break_a_declared_check_are_refused_at_the_check(bad, words):
    """`param c{E} : predicted >= 0` trained on negative targets taught the predictor costs the
    model rules out, silently; the data are refused as bind refuses them, at the check."""
    inst = bind(CHECKED, {"E": ["a", "b"], "cap": [5, 2]}, name="m.opt")
    c = np.ones((4, 2))
    c[2, 1] = bad
    with pytest.raises(DataError, match=words) as info:
        DFLData.from_arrays(inst, {"features": np.ones((4, 3)), "c": c}, "train.npz")
    error = info.value
    assert error.filename == "m.opt" and error.pos.line == 3
    assert "param c{e in E} : predicted >= 0, <= cap[e];" in str(error)
    assert "line 3" in error.hint


def test_scenario_draws_that_break_a_declared_check_name_the_draw():
    inst = bind(UNC.replace("ret[n] : uncertain", "ret[n] : uncertain >= -1"), {"n": 4})
    draws = np.zeros((3, 5, 4))
    draws[1, 3, 2] = -2.0
    with pytest.raises(DataError, match=r"`ret`\[2\] in sample 2, draw 4 of t.npz's array "
                                        r"`ret` \(row 1\): value -2 breaks `>= -1`"):
        ScenarioData.from_arrays(inst, {"features": np.ones((3, 2)), "ret": draws}, "t.npz")
    assert len(ScenarioData.from_arrays(inst, {"features": np.ones((3, 2)),
                                               "ret": np.abs(draws)})) == 3


def test_arrays_training_does_not_read_are_named_in_one_warning():
    """A per-sample `cap` in the training file read as if it varied by sample, and was
    silently ignored: the instance data's `cap` is used. Not an error (a file may serve
    several models, as a data file's unknown keys), but said."""
    import warnings

    from dfl_dsl.errors import DataWarning

    inst = bind(CHECKED, {"E": ["a", "b"], "cap": [5, 2]}, name="m.opt")
    arrays = {"features": np.ones((4, 3)), "c": np.ones((4, 2)), "cap": np.ones((4, 2)),
              "notes": np.zeros(1)}
    with pytest.warns(DataWarning) as caught:
        DFLData.from_arrays(inst, arrays, "train.npz")
    assert len(caught) == 1
    text = str(caught[0].message)
    assert text.startswith("train.npz: warning: these arrays are not read: `cap`, `notes` "
                           "(training reads `features` and `c`)")
    assert "hint: `cap` in m.opt takes the instance data's value (--data)" in text
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # exactly what training reads: nothing to say
        DFLData.from_arrays(inst, {"features": np.ones((4, 3)), "c": np.ones((4, 2))})


def test_a_missing_array_names_what_the_file_has_instead(two):
    """A user's param named otherwise than a data recipe's generator's array (`profit` for
    PyEPO knapsack's `value`): the hint names the arrays it has, and for a recipe (which the
    user can't add an array to) says to rename the param or write a training file."""
    arrays = {"features": np.ones((2, 4)), "value": np.ones((2, 3))}
    with pytest.raises(DataError) as err:
        DFLData.from_arrays(two, arrays, source="k.gen.yaml")
    assert err.value.hint == ("the recipe's generator writes `value` [2, 3]: name the param "
                              "after its array, or write a training file (.npz) with `a` "
                              "shaped [N, 3]")
    with pytest.raises(DataError) as err:
        DFLData.from_arrays(two, arrays, source="t.npz")
    assert err.value.hint == "add `a` with shape [N, 3]; the file has `value` [2, 3]"
