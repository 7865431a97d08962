"""Decision layers from `inst.layer(method=...)`: LP/MILP layers (dbb, dpo, identity) on
shortest path and a model with two predicted params, cvxpylayers on the spec's portfolio, and
the losses that are not layers."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from _helpers import bind, spec_dir
from _learn_helpers import PICK_PROFIT

import dfl_dsl as dfl
from dfl_dsl.errors import DflError
from dfl_dsl.learn.oracle import Oracle

# cvxpylayers' diffcp interface trips numpy 2's __array__(copy=...) deprecation: not ours
pytestmark = pytest.mark.filterwarnings("ignore:__array__ implementation:DeprecationWarning")


@pytest.mark.parametrize("method", ["dbb", "dpo", "identity"])
def test_lp_layers_on_shortest_path(sp_inst, sp_generated, method):
    layer = sp_inst.layer(method)
    truth = torch.as_tensor(sp_generated.targets["cost"][:3], dtype=torch.float64)
    rng = np.random.default_rng(1)
    theta = torch.as_tensor(rng.uniform(0.2, 2.0, (3, 40))).requires_grad_()
    flow = layer(theta)
    assert flow.shape == (3, 40)
    if method != "dpo":  # one solve: a path from source to sink, the oracle's answer
        np.testing.assert_allclose(flow.detach().numpy(),
                                   Oracle(sp_inst).solve_theta(theta.detach()).w, atol=1e-9)
    else:  # the average of paths: each arc's flow in [0, 1]
        assert ((flow >= -1e-9) & (flow <= 1 + 1e-9)).all()
    (flow * truth).sum().backward()  # the decisions' true cost
    assert theta.grad.shape == (3, 40) and torch.isfinite(theta.grad).all()
    assert theta.grad.abs().sum() > 0
    if method == "identity":  # straight-through negative identity
        np.testing.assert_allclose(theta.grad.numpy(), -truth.numpy())


@pytest.mark.parametrize("method", ["dbb", "pfyl", "identity"])
def test_a_single_sample_without_a_batch_axis(sp_inst, sp_generated, method):
    """One sample [k] in, its decisions [n] out, as torch layers answer an unbatched input
    (it was [1, n]); the gradient reaches the unbatched input."""
    cost = torch.as_tensor(sp_generated.targets["cost"][0], dtype=torch.float64)
    cost.requires_grad_(True)
    flow = sp_inst.layer(method)(cost)
    assert flow.shape == (40,)
    batched = sp_inst.layer(method)(cost=cost[None].detach())
    assert batched.shape == (1, 40)
    np.testing.assert_allclose(flow.detach(), batched[0])
    (flow * torch.arange(40.0, dtype=torch.float64)).sum().backward()
    assert cost.grad.shape == (40,)


TWO = """set I;
param a{I} : predicted;
param b[2] : predicted;
var x{I} binary;
var y[2] in [0, 1];
minimize f: sum{i in I} a[i] * x[i] + b @ y;
s.t. one: sum{i in I} x[i] == 1;
s.t. two: sum(y) == 1;
"""


@pytest.mark.parametrize("method", ["dbb", "identity"])
def test_several_predicted_params_go_by_keyword(method):
    inst = bind(TWO, {"I": [1, 2, 3]})
    layer = inst.layer(method)
    a = torch.tensor([[3.0, 1.0, 2.0], [0.5, 1.0, 2.0]], dtype=torch.float64, requires_grad=True)
    b = torch.tensor([[1.0, -1.0], [-2.0, 4.0]], dtype=torch.float64, requires_grad=True)
    w = layer(b=b, a=a)  # order of keywords doesn't matter
    np.testing.assert_allclose(w.detach().numpy(), [[0, 1, 0, 0, 1], [1, 0, 0, 1, 0]],
                               atol=1e-9)
    upstream = torch.tensor([[1.0, 2.0, 3.0, 4.0, 5.0], [5.0, 1.0, 2.0, 1.0, 3.0]],
                            dtype=torch.float64)
    (w * upstream).sum().backward()
    assert a.grad.shape == (2, 3) and b.grad.shape == (2, 2)
    assert torch.isfinite(a.grad).all() and torch.isfinite(b.grad).all()
    if method == "identity":
        np.testing.assert_allclose(a.grad.numpy(), -upstream[:, :3].numpy())
        np.testing.assert_allclose(b.grad.numpy(), -upstream[:, 3:].numpy())
    else:  # DBB: the chosen x (item 2, then 1) and y gain cost where the upstream says so
        assert a.grad.abs().sum() > 0 and b.grad.abs().sum() > 0
    with pytest.raises(TypeError, match="pass them by name"):
        layer(a)
    with pytest.raises(TypeError, match="missing predicted params \\['b'\\]"):
        layer(a=a)
    with pytest.raises(TypeError, match="unknown params \\['c'\\]"):
        layer(a=a, b=b, c=b)
    with pytest.raises(TypeError, match="not both"):
        layer(a, b=b)


@pytest.fixture(scope="module")
def portfolio():
    spec = spec_dir()
    model = dfl.load(spec / "portfolio.opt")
    data = json.loads((spec / "portfolio.json").read_text())
    return model, data


def test_cvxpylayers_portfolio_matches_the_solver_and_finite_differences(portfolio):
    pytest.importorskip("cvxpylayers")
    model, data = portfolio
    inst = model.bind(data)
    sol = inst.solve()
    assert sol.status == "optimal"
    layer = inst.layer("cvxpylayers")
    ret0 = np.asarray(data["ret"], dtype=float)
    ret = torch.tensor(ret0, requires_grad=True)
    w = layer(ret[None])
    assert w.shape == (1, 20)
    np.testing.assert_allclose(w.detach().numpy()[0], np.asarray(sol.value("w")), atol=1e-3)

    # the optimal return V(r) = rᵀw(r): autograd through the layer vs central differences of
    # the solver's objective
    (ret * w[0]).sum().backward()
    grad = ret.grad.numpy()

    def objective(r: np.ndarray) -> float:
        return model.bind({**data, "ret": r.tolist()}).solve().objective

    h = 1e-4
    fd = np.array([(objective(ret0 + h * e) - objective(ret0 - h * e)) / (2 * h)
                   for e in np.eye(len(ret0))])
    assert np.linalg.norm(grad - fd) <= 1e-2 * np.linalg.norm(fd)

    # and a generic linear loss gᵀw(r), against central differences of the layer itself
    g = np.random.default_rng(0).standard_normal(len(ret0))
    ret.grad = None
    (torch.as_tensor(g) * layer(ret[None])[0]).sum().backward()

    def loss(r: np.ndarray) -> float:
        with torch.no_grad():
            return float(g @ layer(torch.as_tensor(r)[None])[0].numpy())

    fd = np.array([(loss(ret0 + h * e) - loss(ret0 - h * e)) / (2 * h)
                   for e in np.eye(len(ret0))])
    assert np.linalg.norm(ret.grad.numpy() - fd) <= 1e-2 * np.linalg.norm(fd)


def test_cvxpylayers_batches(portfolio):
    pytest.importorskip("cvxpylayers")
    model, data = portfolio
    layer = model.bind(data).layer("cvxpylayers")
    ret = torch.as_tensor(np.asarray(data["ret"]))
    w = layer(torch.stack([ret, ret.flip(0)]))
    assert w.shape == (2, 20)
    np.testing.assert_allclose(w.sum(1).detach().numpy(), [1.0, 1.0], atol=1e-6)


def test_cvxpylayers_needs_a_predicted_param():
    pytest.importorskip("cvxpylayers")
    inst = bind("param c; var x in [0, 1]; minimize f: c * x;", {"c": 1.0})
    with pytest.raises(DflError, match="no predicted param"):
        inst.layer("cvxpylayers")


@pytest.mark.parametrize("method", ["spo+", "nce", "mse"])
def test_losses_are_not_layers(sp_inst, method):
    with pytest.raises(DflError, match="is a loss, not a layer") as info:
        sp_inst.layer(method)
    assert "dfl_dsl.learn.losses" in str(info.value)


def test_unknown_layer_method(sp_inst):
    with pytest.raises(DflError, match="unknown layer method `magic`") as info:
        sp_inst.layer("magic")
    assert "dbb" in str(info.value)


@pytest.mark.parametrize(("kwargs", "words"), [
    ({"a": torch.ones(2, 5), "b": torch.ones(2, 2)}, r"`a` takes \[B, 3\] \(a batch\) or \[3\]"),
    ({"a": torch.ones(2, 3, 1), "b": torch.ones(2, 2)}, r"`a` takes \[B, 3\].*got \[2, 3, 1\]"),
    ({"a": torch.ones(2, 3), "b": torch.ones(3, 2)}, "batches of different sizes"),
    ({"a": torch.ones(2, 3), "b": torch.ones(2)}, "batches of different sizes"),
], ids=["wrong-size", "extra-axis", "batch-sizes", "batched-and-single"])
def test_wrongly_shaped_params_are_value_errors(kwargs, words):
    """A tensor of another size failed inside torch's reshape (RuntimeError: shape '[2, 3]' is
    invalid for input of size 10); batches of different sizes inside torch.cat."""
    layer = bind(TWO, {"I": [1, 2, 3]}).layer("dbb")
    with pytest.raises(ValueError, match=words):
        layer(**kwargs)


def test_single_samples_and_scalars_still_go_in():
    layer = bind(TWO, {"I": [1, 2, 3]}).layer("identity")
    w = layer(a=torch.tensor([3.0, 1.0, 2.0]), b=torch.tensor([1.0, -1.0]))
    np.testing.assert_allclose(w.numpy(), [0, 1, 0, 0, 1], atol=1e-9)  # one sample: [n]
    scalar = bind("param c : predicted; var x in [-1, 2]; minimize f: c * x;").layer("dbb")
    np.testing.assert_allclose(scalar(torch.tensor([1.0, -1.0])).numpy(), [[-1], [2]])
    np.testing.assert_allclose(scalar(torch.tensor(1.0)).numpy(), [-1])


@pytest.mark.parametrize("lambd", [0.0, -10.0, float("nan")])
def test_dbb_layer_refuses_a_non_positive_lambda(lambd):
    """The DBB loss refused λ <= 0; the layer took it and returned gradients of flipped sign."""
    with pytest.raises(ValueError, match="lambd must be a positive number"):
        bind(TWO, {"I": [1, 2, 3]}).layer("dbb", lambd=lambd)


@pytest.mark.parametrize("method", ["flexqp", "cvxpylayers"])
def test_a_layer_refusing_a_milp_names_the_layers_that_take_it(method):
    """`inst.layer(method='flexqp')` on a knapsack said only 'takes QP and LP models, not
    MILP', with no file and no way on (cvxpylayers named one, dbb)."""
    inst = bind(PICK_PROFIT, {"I": [1, 2, 3]})
    with pytest.raises(DflError) as info:
        inst.layer(method=method)
    assert info.value.filename == "m.opt"
    assert info.value.hint.startswith("method='dbb', 'dpo', 'pfyl', 'identity' take LP, MILP")
