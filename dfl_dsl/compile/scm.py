"""The structured form of an SCM model (sum of concave over modular functions):

    maximize  F(x) = c0 + gᵀx + Σ_r w_r φ_r(a_rᵀx + b_r)   over binary x,

with w, a >= 0, φ_r ∈ {sqrt, log1p, min(·, cap_r)} concave and nondecreasing, subject to one
cardinality row, one knapsack row, or a partition matroid (disjoint 0/1 rows with caps).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cached_property

import numpy as np
import scipy.sparse as sp

from ..atoms.registry import ATOMS
from ..errors import DflError
from ..evaluate.nonlinear import NL
from ..evaluate.poly import Poly
from ..instance import Instance
from .expand import compiled

# the atoms that may be φ (their `scm` flag), coded by position; `min` caps its argument
PHI = tuple(name for name, atom in ATOMS.items() if atom.scm)
_CODES = {name: code for code, name in enumerate(PHI)}
SQRT, LOG1P, MIN = _CODES["sqrt"], _CODES["log1p"], _CODES["min"]


@dataclass
class SCMForm:
    n: int
    c0: float
    g: np.ndarray  # (n,) linear part
    A: sp.csr_array | sp.csc_array  # (R, n) >= 0; scipy multiplies either without converting
    b: np.ndarray  # (R,)
    w: np.ndarray  # (R,) >= 0
    phi: np.ndarray  # (R,) codes
    cap: np.ndarray  # (R,) for min rows
    kind: str  # "cardinality" | "knapsack" | "partition" | "none"
    cost: np.ndarray  # (n,) knapsack costs (ones for cardinality)
    budget: float
    groups: np.ndarray  # (n,) group id per item (partition), -1 when not in any row
    group_caps: np.ndarray  # (G,)
    upper: np.ndarray  # (n,) 1, or 0 for an item the constraints fix out

    def value(self, x: np.ndarray) -> np.ndarray:
        """F at one point (n,) or a batch (B, n), through the columns of x's nonzeros: the
        batches evaluated are mostly 0/1 sets of k items (a sparse product in scipy costs
        ~0.3 ms of bookkeeping, this ~30 µs)."""
        x = np.atleast_2d(x)
        B, R = x.shape[0], len(self.b)
        batch, cols = np.nonzero(x)
        rows, data, ends = self.nonzeros(cols)
        per = np.diff(ends, prepend=0)
        t = np.bincount(np.repeat(batch, per) * R + rows,
                        weights=np.repeat(x[batch, cols], per) * data, minlength=B * R)
        t = t.reshape(B, R) + self.b
        return self.c0 + x @ self.g + (self.atoms(t) * self.w).sum(axis=1)

    def nonzeros(self, cols: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The nonzeros of A's columns `cols`, column after column: their rows, values, and
        where each column's run ends."""
        A = self.A_csc
        if len(cols) == self.n and np.array_equal(cols, np.arange(self.n)):  # A as it is stored
            return A.indices, A.data, A.indptr[1:]
        starts, ends = A.indptr[cols], A.indptr[cols + 1]
        counts = ends - starts
        flat = np.repeat(ends - np.cumsum(counts), counts) + np.arange(counts.sum())
        return A.indices[flat], A.data[flat], np.cumsum(counts)

    @cached_property
    def atom(self) -> int | None:
        """The one atom every row has, or None when they mix."""
        codes = np.unique(self.phi)
        return int(codes[0]) if len(codes) == 1 else None

    def atoms(self, t: np.ndarray, rows: np.ndarray | None = None) -> np.ndarray:
        """φ_r(t) along the last axis, for the rows `rows` (all by default): the rounding
        evaluates this on a few thousand nonzeros at a time, so one atom skips the masks."""
        if self.atom == SQRT:
            return np.sqrt(np.maximum(t, 0.0))
        if self.atom == LOG1P:
            return np.log1p(np.maximum(t, 0.0))
        if rows is None:
            return concave(t, self.phi, self.cap)
        return concave(t, self.phi[rows], self.cap[rows])

    @classmethod
    def from_features(cls, X, *, phi: str = "sqrt", k: float | None = None,
                      cost: np.ndarray | None = None, budget: float | None = None,
                      groups: np.ndarray | None = None, caps: np.ndarray | None = None,
                      ) -> SCMForm:
        """Feature-based selection straight from arrays, Σ_f φ(Σ_i X[i, f] x_i) with X (items ×
        features) >= 0, under at most `k` items, a knapsack (`cost`, `budget`), or a partition
        (`groups`, `caps`) — what `build_scm` makes of the spec's coverage models, for
        benchmarks and callers who hold the matrix already."""
        X = sp.csr_array(X, dtype=float)  # shares X's arrays when X is a float CSR already
        n, R = X.shape
        # Xᵀ is CSC without a copy; a CSR copy would cost a pass over the nonzeros (0.5 ms on
        # 20,000 × 500 at 2%), and the backend reads A by columns and Aᵀ by rows anyway
        form = cls(n=n, c0=0.0, g=np.zeros(n), A=X.T, b=np.zeros(R),
                   w=np.ones(R), phi=np.full(R, _CODES[phi]), cap=np.zeros(R), kind="none",
                   cost=np.ones(n), budget=float(n), groups=np.full(n, -1),
                   group_caps=np.zeros(0), upper=np.ones(n))
        if k is not None:
            form.kind, form.budget = "cardinality", float(k)
        elif cost is not None and budget is not None:
            form.kind, form.cost, form.budget = "knapsack", np.asarray(cost, float), float(budget)
        elif groups is not None and caps is not None:
            form.kind, form.groups = "partition", np.asarray(groups, dtype=np.int64)
            form.group_caps = np.asarray(caps, dtype=float)
        return form

    @cached_property
    def A_csc(self) -> sp.csc_array:
        """A by columns, for the marginal gains of single items."""
        return self.A if self.A.format == "csc" else sp.csc_array(self.A)

    def restrict(self, items: np.ndarray) -> SCMForm:
        """The form over `items` only, every other item fixed at 0: the backend's working set
        and the rounding's pool are a few hundred of many thousand items, and a column slice
        of A costs their nonzeros only."""
        return replace(self, n=len(items), g=self.g[items], A=self.A_csc[:, items],
                       cost=self.cost[items], groups=self.groups[items],
                       upper=self.upper[items])

    def feasible(self, x: np.ndarray) -> bool:
        x = np.asarray(x)
        if np.any(x > self.upper + 1e-9):  # an item the constraints fix at 0
            return False
        if self.kind in ("cardinality", "knapsack"):  # such an item costs inf: only x > 0 pays
            return float(np.where(x > 0, self.cost, 0.0) @ x) <= self.budget + 1e-9
        if self.kind == "partition":
            used = np.bincount(self.groups[self.groups >= 0], weights=x[self.groups >= 0],
                               minlength=len(self.group_caps))
            return bool(np.all(used <= self.group_caps + 1e-9))
        return True


def concave(t: np.ndarray, phi: np.ndarray, cap: np.ndarray) -> np.ndarray:
    """φ_r(t_r) along the last axis (t clipped at 0, where every φ starts); each atom is
    computed only on its own rows (the marginal gains call this on many nonzeros of A)."""
    t = np.maximum(t, 0.0)
    out = np.empty_like(t)
    for code, name in enumerate(PHI):
        rows = phi == code
        if rows.all():
            return _phi(name, t, cap)
        if rows.any():
            out[..., rows] = _phi(name, t[..., rows], cap[rows])
    return out


def _phi(name: str, t: np.ndarray, cap: np.ndarray) -> np.ndarray:
    """φ on t by the atom's numpy form; an atom of two arguments (`min`) takes the cap."""
    atom = ATOMS[name]
    return atom.numpy([t, cap] if atom.nargs[0] > 1 else [t], None)


def build_scm(inst: Instance) -> SCMForm:
    if inst.klass.name != "SCM":
        raise DflError(f"the aapga backend takes SCM models, this one is {inst.klass.name}")
    ex = compiled(inst)
    nx = inst.n_vars
    objective = ex.objective
    if not isinstance(objective, NL):
        raise DflError("an SCM objective has concave atoms (sqrt, log1p, min)")
    poly = objective.poly
    if poly.degree > 1:
        raise DflError("an SCM objective's polynomial part must be linear")
    g = np.zeros(nx)
    lin = poly.lin.tocoo()
    np.add.at(g, lin.col, lin.data)
    rows_a, rows_b, rows_w, rows_phi, rows_cap = [], [], [], [], []
    for matrix, node in objective.terms:
        if not ATOMS[node.name].scm or node.starts is not None:
            raise DflError(f"`{node.name}` is not an SCM atom (sqrt, log1p, min(·, c))")
        weights = np.asarray(sp.csr_array(matrix).toarray()).ravel()
        arg = node.args[0]
        if not isinstance(arg, Poly) or arg.degree > 1:
            raise DflError("an SCM atom's argument must be linear in the variables")
        a = arg.lin.tocsr()[:, :nx]
        if a.nnz and a.data.min() < 0:
            raise DflError("an SCM atom's argument needs nonnegative coefficients")
        cap = np.zeros(node.rows)
        if len(node.args) > 1:  # min(a'x, c)
            other = node.args[1]
            if isinstance(other, Poly):
                if other.degree:
                    raise DflError("`min(a'x, c)` needs a constant c")
                other = other.const
            cap = np.broadcast_to(np.asarray(other, dtype=float), (node.rows,)).copy()
        if (weights < 0).any():
            raise DflError("an SCM objective needs nonnegative weights")
        rows_a.append(sp.csr_array(a))
        rows_b.append(arg.const)
        rows_w.append(weights)
        rows_phi.append(np.full(node.rows, _CODES[node.name]))
        rows_cap.append(cap)
    A = sp.csr_array(sp.vstack(rows_a))
    # a dense data param (feat{ITEMS, FEATURES}) leaves its zeros stored: 98% of the entries
    # on the benchmark's features, and every product, gain and swap would pay for them
    A.eliminate_zeros()
    form = SCMForm(
        n=nx, c0=float(poly.const.sum()), g=g,
        A=A, b=np.concatenate(rows_b), w=np.concatenate(rows_w),
        phi=np.concatenate(rows_phi), cap=np.concatenate(rows_cap), kind="none",
        cost=np.ones(nx), budget=float(nx), groups=np.full(nx, -1), group_caps=np.zeros(0),
        upper=np.ones(nx),
    )
    _constraints(inst, form)
    return form


# A knapsack's relaxed polytope is projected onto through x_i = clip(v_i − τ c_i) with breakpoints
# v_i / c_i and slopes c_i² (aapga_polytope): a cost of 1e-320 made 1/c inf and the relaxed point
# broke the budget 12-fold, which the rounding, keeping Σ c x, carried into the answer
COST_RANGE = (1e-150, 1e150)


def _check_costs(inst: Instance, linear, row: int, cost: np.ndarray) -> None:
    """A DflError at the knapsack row when a live item's cost is outside `COST_RANGE`."""
    low, high = COST_RANGE
    bad = np.isfinite(cost) & ((cost < low) | (cost > high))
    if not bad.any():
        return
    col = int(np.argmax(bad))
    block = linear.block_of(row)
    name = block[0] if block is not None and block[1] is None else ""
    pos = next((decl.pos for decl in inst.model.constraints if decl.name == name), None)
    raise DflError(f"constraint `{name}`: the cost {cost[col]:g} of {inst.column_label(col)} "
                   f"is outside what the aapga backend's relaxation can hold ({low:g} to "
                   f"{high:g}: it divides by the costs and squares them)", pos,
                   hint="rescale the row's units, or leave out an item that costs nothing "
                   "next to the budget", filename=inst.model.filename,
                   source=inst.model.source)


def _constraints(inst: Instance, form: SCMForm) -> None:
    """Recognize a cardinality row, a knapsack row, or a partition matroid."""
    from .bridges import bridge
    from .linear import assemble
    from .reductions.rows_to_bounds import rows_to_bounds

    ex = compiled(inst)
    rows_only = replace(ex, objective=Poly.zeros(1, inst.width))  # the constraints' standard form
    linear = rows_to_bounds(assemble(bridge(rows_only, inst), inst))
    A, ru, rl = linear.A.tocsr()[:, : form.n], linear.ru, linear.rl
    n = form.n
    if np.any(np.isfinite(rl) & (rl > 0)):
        raise DflError("SCM constraints are upper limits (`<=`) on nonnegative sums")
    rows = [i for i in range(A.shape[0]) if A.indptr[i + 1] > A.indptr[i]]
    if any(A[[i]].data.min() < 0 for i in rows):
        raise DflError("SCM constraints need nonnegative coefficients")
    # bounds from single-variable rows already moved to lb/ub: items fixed at 0 leave the game
    fixed_out = linear.ub[:n] < 0.5
    form.upper = np.where(fixed_out, 0.0, 1.0)
    if not rows:
        form.kind = "none"
        return
    if len(rows) == 1:
        i = rows[0]
        cost = np.zeros(n)
        row = A[[i]].tocoo()
        cost[row.col] = row.data
        cost[fixed_out] = np.inf
        budget = float(ru[i])
        covered = np.zeros(n, dtype=bool)
        covered[row.col] = True
        if not covered[~fixed_out].all():
            raise DflError("an SCM constraint must cover every item")
        form.cost, form.budget = cost, budget
        finite = np.isfinite(cost)
        form.kind = "cardinality" if np.allclose(cost[finite], cost[finite][0]) else "knapsack"
        if form.kind == "cardinality":
            form.budget = np.floor(budget / cost[finite][0] + 1e-9)
            form.cost = np.where(finite, 1.0, np.inf)
        else:
            _check_costs(inst, linear, i, cost)
        return
    groups = np.full(n, -1)
    caps = []
    for gid, i in enumerate(rows):
        row = A[[i]].tocoo()
        if not np.allclose(row.data, 1.0):
            raise DflError("several SCM constraints must form a partition matroid "
                           "(0/1 rows over disjoint groups)")
        if np.any(groups[row.col] >= 0):
            raise DflError("the groups of a partition matroid must be disjoint")
        groups[row.col] = gid
        caps.append(np.floor(ru[i] + 1e-9))
    groups[fixed_out] = -1
    form.kind = "partition"
    form.groups, form.group_caps = groups, np.asarray(caps, dtype=float)
