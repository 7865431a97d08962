"""Training data: features and the predicted params' true values, validated against the model,
with the true decisions and optima filled in by the oracle."""

from __future__ import annotations

import numpy as np
import pytest
from _helpers import bind
from _learn_helpers import PICK_PROFIT

from dfl_dsl.errors import DataError
from dfl_dsl.learn.dataset import DFLData
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
     "NaN or inf"),
], ids=["no-features", "features-1d", "missing-param", "nan-param", "inf-features"])
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
