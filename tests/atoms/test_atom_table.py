"""The atom table: every atom's forms agree with each other — numpy, torch and CVXPY, for
elementwise atoms and for reductions of row groups — so a backend reading one form computes
what another reads from another."""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest
import torch

import dfl_dsl as dfl
from dfl_dsl.atoms.base import Elementwise, GroupReduction
from dfl_dsl.atoms.groups import Groups
from dfl_dsl.atoms.registry import ATOMS, FUNCTIONS

rng = np.random.default_rng(0)
# positive values: every elementwise atom is defined there (log, sqrt)
DATA = rng.uniform(0.2, 3.0, size=7)
SIGNED = rng.normal(size=9)
STARTS = np.array([0, 2, 3, 9])
PARAMS = {"power": 3.0}


def _elementwise():
    return [a for a in ATOMS.values() if isinstance(a, Elementwise)]


def _grouped():
    return [a for a in ATOMS.values() if isinstance(a, GroupReduction)]


def test_the_table_is_keyed_by_name_and_power_is_not_callable():
    assert all(name == atom.name for name, atom in ATOMS.items())
    assert "power" in ATOMS and "power" not in FUNCTIONS


@pytest.mark.parametrize("atom", _elementwise(), ids=lambda a: a.name)
def test_elementwise_forms_agree(atom):
    param = PARAMS.get(atom.name)
    want = atom.numpy([DATA], param)
    got = atom.torch([torch.as_tensor(DATA)], param)
    if got is not None:
        assert np.allclose(got.numpy(), want)
    expr = atom.cvxpy([cp.Constant(DATA)], param)
    if expr is not None:
        assert np.allclose(expr.value, want)


@pytest.mark.parametrize("atom", _grouped(), ids=lambda a: a.name)
def test_group_forms_agree(atom):
    want = [atom.reduce(SIGNED[a:b], (0,)) for a, b in zip(STARTS[:-1], STARTS[1:], strict=True)]
    got = atom.torch_groups(torch.as_tensor(SIGNED), Groups(STARTS), None)
    if got is not None:
        assert np.allclose(got.numpy(), want)
        # a leading batch axis is reduced row by row
        batch = torch.as_tensor(np.stack([SIGNED, -SIGNED]))
        assert np.allclose(atom.torch_groups(batch, Groups(STARTS), None)[0].numpy(), want)
    cvx = [atom.cvxpy_group(cp.Constant(SIGNED[a:b]), None)
           for a, b in zip(STARTS[:-1], STARTS[1:], strict=True)]
    if cvx[0] is not None:
        assert np.allclose([e.value for e in cvx], want)


def test_pairwise_extremes_agree_across_forms():
    a, b = SIGNED[:4], SIGNED[4:8]
    for name in ("max", "min"):
        atom = ATOMS[name]
        want = atom.numpy([a, b], None)
        assert np.allclose(atom.torch([torch.as_tensor(a), torch.as_tensor(b)], None), want)
        assert np.allclose(atom.cvxpy([cp.Constant(a), cp.Constant(b)], None).value, want)
        groups = atom.torch_groups(torch.as_tensor(SIGNED), Groups(STARTS), None).numpy()
        reduce = np.maximum if name == "max" else np.minimum
        assert np.allclose(groups, reduce.reduceat(SIGNED, STARTS[:-1]))


@pytest.mark.parametrize("body", ["norm1(W)", "norm2(W)", "norm_inf(W)", "sum_squares(W)",
                                  "nnz(B)", "norm_inf(B)", "trace(W.T @ W)", "trace(V)"])
def test_a_reduction_of_an_empty_array_is_its_empty_value(body):
    # fuzz (spec sparse_pca with r = 0): norm1 of an n x 0 variable made one row group too few
    # (a raw numpy "operands could not be broadcast together with shapes (1,) (0,)"); norm2
    # crashed in CVXPY, norm_inf of it was `unbounded` (an epigraph t over no entries)
    text = ("param n : int; param B[n, 0]; var W[n, 0] >= -1 <= 1; var V[0, 0];\n"
            f"var y >= 1 <= 2;\nminimize f: {body} + y;\n")
    solution = dfl.parse(text, "m.opt").bind({"n": 3, "B": [[], [], []]}).solve()
    assert solution.status == "optimal" and solution.objective == pytest.approx(1.0)
