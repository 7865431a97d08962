"""The structured form of a STIEFEL model: minimize f(X) + h(X) subject to XᵀX = I.

f is smooth and h separable and nonsmooth, h(X) = λ₁‖X‖₁ + λ₀‖X‖₀ + ι(X >= 0), the split
OBCD works on (Yuan, "A block coordinate descent method for nonsmooth composite optimization
under orthogonality constraints", arXiv 2304.03641). The expanded objective is a polynomial of
degree <= 2 plus atom terms (`evaluate.nonlinear.NL`); `norm1(X)` and `nnz(X)` atoms become λ₁
and λ₀, a `>= 0` bound on X the nonnegativity indicator. A quadratic f whose Hessian factors as
C ⊗ R (row-major vec: `trace(X.T @ C @ X)`, `sum_squares(A @ X)`, linear terms) is kept as
(C, R, G, c0) so that OBCD can minimize each block's subproblem exactly; any other smooth f
(general quadratic couplings, `exp`, `log`, ...) is evaluated in torch and differentiated by
autograd.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
import torch

from ..ast import NOWHERE, Pos
from ..atoms.groups import Groups
from ..atoms.registry import ATOMS
from ..errors import DflError
from ..evaluate.nonlinear import NL, AtomNode
from ..evaluate.poly import Poly
from ..instance import Instance
from .expand import compiled


@dataclass
class KronQuadratic:
    """f(X) = ½ tr(Xᵀ C X R) + <G, X> + c0 with C (n × n) and R (r × r) symmetric."""

    C: np.ndarray
    R: np.ndarray
    G: np.ndarray
    c0: float

    def value(self, X: np.ndarray) -> float:
        return float(0.5 * np.sum(X * (self.C @ X @ self.R)) + np.sum(self.G * X) + self.c0)


@dataclass
class TorchSmooth:
    """Any other smooth f, as a torch function of X (gradients by autograd)."""

    fn: Callable[[torch.Tensor], torch.Tensor]

    def value(self, X: np.ndarray) -> float:
        return float(self.fn(torch.as_tensor(X, dtype=torch.float64)))


@dataclass
class StiefelForm:
    n: int
    r: int
    smooth: KronQuadratic | TorchSmooth
    l1: float = 0.0
    l0: float = 0.0
    nonneg: bool = False
    pos: Pos = NOWHERE  # the objective in the model, for errors about its values at a point
    maximize: bool = False  # the model maximizes −(f + h): the form holds its negation

    def h(self, X: np.ndarray) -> float:
        if self.nonneg and np.any(X < 0):
            return float("inf")
        return float(self.l1 * np.abs(X).sum() + self.l0 * np.count_nonzero(X))

    def value(self, X: np.ndarray) -> float:
        """F(X) = f(X) + h(X), the minimized objective."""
        return self.smooth.value(X) + self.h(X)


def build_stiefel(inst: Instance) -> StiefelForm:
    """The StiefelForm of a bound STIEFEL model (the checker has already ruled out other
    variables, constraints and nonsmooth terms that are not multiples of norm1/nnz). What only
    the data decides (X's bound, the penalties' weights) is checked here, so the errors are
    located in the model file like the checker's."""
    if inst.klass.name != "STIEFEL":
        raise DflError(f"the obcd backend takes STIEFEL models, this one is {inst.klass.name}")
    try:
        return _build(inst, inst.model.objective.pos)
    except DflError as exc:
        raise exc.located(inst.model.filename, inst.model.source) from None


def _build(inst: Instance, pos: Pos) -> StiefelForm:
    """A maximized model becomes the minimization of its negation (OBCD minimizes), with
    `maximize` set so the answer is reported in the model's sense."""
    (var,) = inst.variables
    n, r = var.shape
    nonneg = _nonneg(var)
    maximize = inst.model.objective.sense == "maximize"
    sign = -1.0 if maximize else 1.0
    objective = compiled(inst).objective
    poly = objective.poly if isinstance(objective, NL) else objective
    terms = objective.terms if isinstance(objective, NL) else []
    weights = {"l1": 0.0, "l0": 0.0}
    smooth_terms = []
    for matrix, node in terms:
        matrix = sign * sp.csr_array(matrix)
        penalty = ATOMS[node.name].stiefel_penalty
        if penalty is not None and _whole(node, n * r):
            w = float(matrix.sum())
            if w < 0:
                raise DflError(f"the weight of `{node.name}(X)` must be nonnegative"
                               + (" (it is subtracted: the model maximizes)" if maximize
                                  else ""), pos)
            weights[penalty] += w
        else:
            smooth_terms.append((matrix, node))
    H, g, c0 = _quadratic(poly, n * r)
    H, g, c0 = sign * H, sign * g, sign * c0
    smooth = None
    if not smooth_terms:
        kron = _kronecker(H, n, r)
        if kron is not None:
            C, R = kron
            smooth = KronQuadratic(C, R, g.reshape(n, r), c0)
    if smooth is None:
        smooth = TorchSmooth(_torch_objective(H, g, c0, smooth_terms, n, r))
    return StiefelForm(n, r, smooth, weights["l1"], weights["l0"], nonneg, pos, maximize)


def _nonneg(var) -> bool:
    lower, upper = var.lower, var.upper
    if np.all(lower == -np.inf):
        return False
    if np.all(lower == 0) and np.all(upper == np.inf):
        return True
    raise DflError(f"a stiefel variable's only bound is `{var.name} >= 0`", var.decl.pos)


def _whole(node: AtomNode, size: int) -> bool:
    """`norm1(X)` over the whole matrix, one output row, argument = the variables in order."""
    arg = node.args[0]
    if node.starts is None or node.rows != 1 or not isinstance(arg, Poly) or arg.degree != 1:
        return False
    lin = arg.lin.tocsr()
    return (arg.rows == size and lin.nnz == size and not arg.const.any()
            and np.array_equal(lin.indices, np.arange(size)) and np.all(lin.data == 1.0))


def _quadratic(poly: Poly, size: int) -> tuple[sp.csr_array, np.ndarray, float]:
    """One-row Poly -> (H, g, c0) with poly = ½ zᵀHz + gᵀz + c0 over the first `size` symbols."""
    g = np.zeros(size)
    lin = poly.lin.tocoo()
    np.add.at(g, lin.col, lin.data)
    H = sp.csr_array((size, size))
    if poly.quad is not None and poly.quad.nnz:
        q = poly.quad.tocoo()
        a, b = poly.pairs[q.col, 0], poly.pairs[q.col, 1]
        v = q.data
        rows = np.concatenate([a, b])
        cols = np.concatenate([b, a])
        H = sp.csr_array((np.concatenate([v, v]), (rows, cols)), shape=(size, size))
    return H, g, float(poly.const.sum())


def _kronecker(H: sp.csr_array, n: int, r: int) -> tuple[np.ndarray, np.ndarray] | None:
    """Factor H = C ⊗ R (row-major vec, z[i·r + j] = X[i, j]) when it is one: pick the largest
    entry, read C and R off its row/column blocks, and check every stored entry."""
    if H.nnz == 0:
        return np.zeros((n, n)), np.zeros((r, r))
    coo = H.tocoo()
    a, b, v = coo.row, coo.col, coo.data
    k = int(np.argmax(np.abs(v)))
    (i0, j0), (i1, j1) = divmod(int(a[k]), r), divmod(int(b[k]), r)
    ia, ja, ib, jb = a // r, a % r, b // r, b % r
    R = np.zeros((r, r))
    sel = (ia == i0) & (ib == i1)
    R[ja[sel], jb[sel]] = v[sel] / v[k]
    C = np.zeros((n, n))
    sel = (ja == j0) & (jb == j1)
    C[ia[sel], ib[sel]] = v[sel]
    ok = (np.count_nonzero(C) * np.count_nonzero(R) == len(v)
          and np.allclose(C[ia, ib] * R[ja, jb], v, rtol=1e-9, atol=0.0)
          and np.allclose(C, C.T) and np.allclose(R, R.T))
    return (C, R) if ok else None


# ---------------------------------------------------------------------- autograd fallback
def _torch_objective(H, g, c0, terms, n: int, r: int) -> Callable[[torch.Tensor], torch.Tensor]:
    """f(X) in torch: the quadratic part plus the smooth atom terms."""
    Ht = _torch_sparse(H)
    gt = torch.as_tensor(g, dtype=torch.float64)
    size = n * r

    def fn(X: torch.Tensor) -> torch.Tensor:
        z = X.reshape(-1)
        Hl, gl = Ht.to(z.device), gt.to(z.device)
        out = 0.5 * (z * (Hl @ z)).sum() + gl @ z + c0
        for matrix, node in terms:
            rows = _atom_rows(node, z, size)
            out = out + (_torch_sparse(sp.csr_array(matrix)).to(z.device) @ rows).sum()
        return out

    return fn


def _torch_sparse(m: sp.csr_array) -> torch.Tensor:
    coo = sp.coo_array(m)
    return torch.sparse_coo_tensor(np.vstack([coo.row, coo.col]), coo.data, coo.shape,
                                   dtype=torch.float64, check_invariants=True).coalesce()


def _payload_rows(payload, z: torch.Tensor, size: int) -> torch.Tensor:
    """Every row of a Poly or NL payload at z (the variables only: stiefel models have no θ)."""
    if isinstance(payload, NL):
        out = _payload_rows(payload.poly, z, size)
        for matrix, node in payload.terms:
            out = out + _torch_sparse(sp.csr_array(matrix)).to(z.device) @ _atom_rows(node, z,
                                                                                       size)
        return out
    lin = sp.csr_array(payload.lin)[:, :size]
    out = torch.as_tensor(payload.const, dtype=torch.float64, device=z.device)
    out = out + _torch_sparse(lin).to(z.device) @ z
    if payload.quad is not None and payload.quad.nnz:
        pairs = torch.as_tensor(payload.pairs, device=z.device)
        out = out + _torch_sparse(sp.csr_array(payload.quad)).to(z.device) @ (
            z[pairs[:, 0]] * z[pairs[:, 1]])
    return out


def _atom_rows(node: AtomNode, z: torch.Tensor, size: int) -> torch.Tensor:
    """The node's rows at z, by the atom's torch form (`atoms.registry`)."""
    args = [_payload_rows(a, z, size) if isinstance(a, Poly | NL)
            else torch.as_tensor(a, dtype=torch.float64, device=z.device) for a in node.args]
    atom = ATOMS[node.name]
    if node.starts is not None:  # a reduction of row groups
        if not atom.smooth:
            raise DflError(f"`{node.name}` is not smooth: the obcd backend's f must be smooth")
        value = atom.torch_groups(args[0], Groups(node.starts), node.param)
    else:
        value = atom.torch(args, node.param) if atom.smooth else None
    if value is None:
        raise DflError(f"`{node.name}` is not supported in a stiefel objective's smooth part")
    return value
