"""The solver oracle of decision-focused learning: a batch of predicted params -> optimal
decisions, through one protocol (.solvers) whatever solves them.

Costs live in the canonical (minimized) space of `LinearForm`: ĉ = c + Cθ θ̂. Losses and
metrics work there, so minimize and maximize models share one code path (as in PyEPO, where
losses share one solver-oracle interface; Tang & Khalil, "PyEPO", Math. Prog. Comp. 2024).

Which solver runs (`method`): `highs` re-solves a warm HiGHS model per cost vector;
`enumerate` takes the argmin over a listed feasible set (small pure-integer models);
`batched` solves the batch at once with the torch PDHG solver, certified per sample, HiGHS
for what it can't certify (LPs and integer models with an integral relaxation, on the
oracle's device); `auto` takes the listing when it fits, the batched solver on a GPU when the
model allows it, and on a CPU HiGHS for batches under BATCHED_FROM samples and the batched
solver for larger ones — a warm simplex re-solve answers a few LPs sooner than a batched
method's fixed number of steps (docs/training.md has the figures).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from .. import ast
from ..compile.linear import LinearForm
from ..compile.unimodular import integral_relaxation
from ..errors import DflError
from .enumeration import feasible_points, why_not_enumerable
from .executors import EXECUTORS, NO_SOLUTION_HINTS
from .solvers import BatchedSolver, BySizeSolver, DecisionSolver, EnumerationSolver, HighsSolver

METHODS = ("auto", "highs", "enumerate", "batched")
BATCHED_FROM = 256  # on a CPU, batches of at least this many LPs go to the batched solver
# when predictions that overflowed reach the solver: the trainer stops a diverging run
# before; this is what is left (a test set's features the trained weights overflow on)
NON_FINITE_HINT = "scale the features (or, if training diverged, lower --lr)"


@dataclass
class Batch:
    """Optimal decisions (full canonical vector, auxiliaries included) and canonical costs."""

    w: np.ndarray  # (B, n)
    objective: np.ndarray  # (B,) canonical ĉᵀw + ½wᵀPw (without the constant c0)


def training_form(inst) -> LinearForm:
    """The instance's LinearForm, or why the decision-focused losses can't train it: they need
    `predicted` params (only), entering the linear terms of the objective of an LP, a MILP or
    a convex QP (the losses `losses.quadratic_losses()` names)."""
    if not inst.predicted:
        raise DflError(
            "the model has no `predicted` param to learn",
            hint="mark the numbers a network predicts with `: predicted`",
            filename=inst.model.filename,
        )
    if inst.uncertain:
        raise DflError(
            "a model with both `predicted` and `uncertain` params can't be trained yet",
            hint="train the `predicted` params with the `uncertain` ones fixed as data, or "
                 "make them all `uncertain`", filename=inst.model.filename,
        )
    try:
        form = inst.linear_form()
    except DflError as exc:
        if exc.hint and "--backend" in exc.hint:  # a class refusal, for `dfl solve`'s
            exc.message = ("the decision-focused losses need an LP, a MILP or a convex QP: "
                           f"{exc.message}")
            exc.args = (exc.message,)
            exc.hint = ("for a convex model, train through inst.layer(method='cvxpylayers')"
                        " in Python (docs/training.md)")
        raise
    if form.n_theta == 0:
        names = ", ".join(f"`{e.name}`" for e in inst.predicted)
        raise DflError(
            f"the predicted params ({names}) have no entries with this instance data",
            hint="their index sets are empty: check the sets in the data",
            filename=inst.model.filename,
        )
    if form.theta_in_constraints:
        raise _theta_in_constraints(inst, form)
    if form.is_qp and form.is_mip:
        raise DflError(
            "the objective is quadratic and some variables are integer; the oracle (HiGHS) "
            "solves no mixed-integer QP",
            hint="relax the integer variables, or make the objective linear",
            filename=inst.model.filename,
        )
    _idle_predicted(inst, form)
    return form


def _idle_predicted(inst, form: LinearForm) -> None:
    """A predicted param that multiplies no variable in the objective changes no decision:
    training it learns nothing, and with none that does every regret is the same number
    whatever is predicted (a user's objective that names a data param where the predicted
    one was meant trained to regret 0.0000). None: refused at the first one's declaration;
    some: one warning naming them (their network outputs are ignored)."""
    used = np.asarray(abs(form.c_theta).sum(axis=0)).ravel() > 0
    idle = [e for e in inst.predicted if not used[e.offset - inst.n_vars:
                                                   e.offset - inst.n_vars + e.size].any()]
    if not idle or inst.memo.get("idle predicted warned"):
        return
    model = inst.model
    names = ", ".join(f"`{e.name}`" for e in idle)
    error = DflError(
        f"predicted param{'s' * (len(idle) > 1)} {names} multipl"
        f"{'y' if len(idle) > 1 else 'ies'} no variable in the objective, so no prediction "
        "changes a decision" + ("" if len(idle) < len(inst.predicted) else
                                ": training would learn nothing (every regret the same)"),
        model.symbols[idle[0].name].decl.pos, filename=model.filename, source=model.source,
        hint="use it in the objective, multiplying a variable (a cost), or drop "
             "`: predicted` and give it as data")
    if len(idle) == len(inst.predicted):
        raise error
    import warnings

    from ..errors import DataWarning

    inst.memo["idle predicted warned"] = True
    warnings.warn(DataWarning(error.format("warning")), stacklevel=4)


def _theta_in_constraints(inst, form: LinearForm) -> DflError:
    """The refusal of a predicted param in a constraint, at the first place it is written in
    the first constraint row it enters (the constraint itself where an `expr` carries it)."""
    rows, thetas = form.row_theta.tocoo().coords
    rows = np.concatenate([rows, form.a_theta[0]]).astype(np.int64)
    thetas = np.concatenate([thetas, form.a_theta[2]]).astype(np.int64)
    first = int(np.argmin(rows))
    block, k = form.block_of(int(rows[first])), int(thetas[first])
    owner = block[0] if block is not None else None
    param = next((e for e in inst.thetas
                  if e.offset - inst.n_vars <= k < e.offset - inst.n_vars + e.size), None)
    what = f"predicted param `{param.name}`" if param is not None else "a predicted param"
    where = f"constraint `{owner}`" if owner else "a constraint"
    pos = None
    decl = next((c for c in inst.model.constraints if c.name == owner), None)
    if decl is not None:
        pos = decl.pos
        if param is not None:
            pos = next((n.pos for n in ast.walk(decl)
                        if isinstance(n, ast.Name) and n.id == param.name), pos)
    return DflError(
        f"{what} enters {where}; the decision-focused losses here need predicted params in "
        "the objective only",
        pos, filename=inst.model.filename, source=inst.model.source,
        hint="`dfl solve` takes it as data; to train, keep the predicted numbers in the "
             "objective (costs, values) and give this one in the data",
    )


def unbounded_at(inst, form: LinearForm, costs: np.ndarray) -> DflError:
    """An unbounded training solve, at the declaration of a variable the costs push towards
    an infinite bound (the first found: a constraint may still hold that one, so it is named
    as an example). Training solves with predicted costs of any sign: an LP bounded for every
    true cost can be unbounded for a prediction (exit 2 with no place to act, before)."""
    n = inst.n_vars
    lb, ub = form.lb[:n], form.ub[:n]
    push = (costs[:, :n] < 0) & np.isinf(ub) | (costs[:, :n] > 0) & np.isinf(lb)
    model = inst.model
    message = ("the oracle found no solution (status unbounded): a cost vector (true or "
               "predicted) makes the objective unbounded")
    pos = None
    if push.any():
        row, col = np.argwhere(push)[0]
        up = costs[row, col] < 0
        label = inst.column_label(int(col))
        message += (f"; e.g. `{label}` has no {'upper' if up else 'lower'} bound and the "
                    f"objective improves as it {'grows' if up else 'falls'}")
        symbol = model.symbols.get(label.split("[")[0])
        pos = symbol.decl.pos if symbol is not None else None
    return DflError(message, pos, filename=model.filename, source=model.source,
                    hint="a network's predictions may have any sign: give the variables "
                         "finite bounds (`var x{...} >= 0, <= U;`) or constraints that "
                         "hold them")


def pool_key(row: np.ndarray) -> bytes:
    """A solution's key in the pool: rounded to 9 decimals, and -0.0 made 0.0 (a solver's
    -0.0 has other bytes: the same solution would enter the pool twice and weigh double in
    NCE's and the ranking losses' means)."""
    return (np.round(row, 9) + 0.0).tobytes()


class Oracle:
    """Batched argmin of ĉᵀw over the instance's feasible set, by the solver `method` names
    (module docstring). `processes > 1` spreads HiGHS's solves over worker processes (or Ray
    actors); `device` is where the batched solver computes. `pool` keeps every distinct
    solution seen (the solution pool that NCE uses)."""

    def __init__(self, inst, *, processes: int = 1, time_limit: float | None = None,
                 executor: str = "processes", ray_address: str | None = None,
                 method: str = "auto", device: str | torch.device = "cpu") -> None:
        form = training_form(inst)
        if executor not in EXECUTORS:
            raise DflError(f"unknown executor `{executor}`",
                           hint="use one of: " + ", ".join(EXECUTORS))
        if method not in METHODS:
            raise DflError(f"unknown oracle method `{method}`",
                           hint="use one of: " + ", ".join(METHODS))
        self.inst = inst
        self.form: LinearForm = form
        self.n = form.n
        self.device = torch.device(device)
        self.theta_index = inst.predicted_index()
        self.pool: dict[bytes, np.ndarray] = {}
        self.solver: DecisionSolver = self._choose(method, dict(
            processes=processes, executor=executor, ray_address=ray_address,
            time_limit=time_limit))
        c_theta = form.c_theta.tocsc()[:, self.theta_index]
        self._c = torch.as_tensor(form.c, dtype=torch.float64)
        self._c_theta = torch.as_tensor(c_theta.toarray(), dtype=torch.float64)
        self._c0_theta = form.c0_theta[self.theta_index]
        # the quadratic part ½wᵀPw of a QP's canonical objective (P is fixed: θ enters the
        # linear terms only), as a sparse matrix per device
        self._P: dict[torch.device, torch.Tensor] = {}

    def _choose(self, method: str, highs_options: dict) -> DecisionSolver:
        filename = self.inst.model.filename
        points = None if method in ("highs", "batched") else feasible_points(self.form)
        if method == "enumerate" and points is None:
            reason = why_not_enumerable(self.form) or "its feasible set is too large to list"
            raise DflError(f"the oracle can't enumerate this model: {reason}",
                           hint="use --oracle highs (or auto)", filename=filename)
        if points is not None:
            if len(points) == 0:
                raise DflError("the model has no feasible point",  # (the same as HiGHS's)
                               hint=NO_SOLUTION_HINTS["infeasible"], filename=filename)
            return EnumerationSolver(points)
        highs = HighsSolver(self.form, **highs_options)
        why_not = integral_relaxation(self.form) if self.form.is_mip else (
            "the objective is quadratic" if self.form.is_qp else None)
        if method == "batched" and why_not is not None:
            raise DflError(f"the batched oracle solves LPs and integer models whose LP "
                           f"relaxation is integral; here {why_not}",
                           hint="use --oracle highs (or auto)", filename=filename)
        if method == "batched" or (method == "auto" and why_not is None
                                   and self.device.type == "cuda"):
            return BatchedSolver(self.form, highs, device=self.device)
        if method == "auto" and why_not is None and highs.processes == 1 and (
                highs.executor == "processes"):  # (workers asked for: HiGHS it is)
            return BySizeSolver(highs, BatchedSolver(self.form, highs), BATCHED_FROM)
        return highs

    @property
    def method(self) -> str:
        """The solver that runs: highs, enumerate, batched or highs+batched."""
        return self.solver.name

    @property
    def solver_calls(self) -> int:
        return self.solver.stats()["solves"]

    def stats(self) -> dict:
        """What the solver did: solves, and for the batched one fallbacks and iterations."""
        return self.solver.stats()

    # ------------------------------------------------------------------ costs
    @property
    def n_theta(self) -> int:
        return len(self.theta_index)

    def costs(self, theta: torch.Tensor) -> torch.Tensor:
        """Canonical cost vectors ĉ = c + Cθ θ (differentiable in θ), shape (B, n)."""
        c = self._c.to(theta.device, theta.dtype)
        m = self._c_theta.to(theta.device, theta.dtype)
        return c + theta @ m.T

    @property
    def is_qp(self) -> bool:
        return self.form.is_qp

    def value(self, costs: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        """The canonical objective ĉᵀw + ½wᵀPw of decisions w (..., n) under costs (..., n),
        without the constant c0: the one place losses and metrics read an objective from, so
        a QP's quadratic part is never forgotten. Differentiable in both."""
        linear = (costs * w).sum(-1)
        if not self.form.is_qp:
            return linear
        flat = w.reshape(-1, self.n)
        pw = torch.sparse.mm(self._hessian(w.device), flat.T.to(torch.float64)).T.to(w.dtype)
        return linear + 0.5 * (flat * pw).sum(-1).reshape(w.shape[:-1])

    def _hessian(self, device: torch.device) -> torch.Tensor:
        if device not in self._P:
            P = self.form.P.tocoo()
            index = torch.as_tensor(np.stack([P.row, P.col]), dtype=torch.int64)
            self._P[device] = torch.sparse_coo_tensor(
                index, torch.as_tensor(P.data, dtype=torch.float64), P.shape,
                check_invariants=False).coalesce().to(device)
        return self._P[device]

    def constant(self, theta: np.ndarray) -> np.ndarray:
        """The canonical objective's constant c0(θ) per sample."""
        return self.form.c0 + theta @ self._c0_theta

    # ------------------------------------------------------------------ solving
    def decisions(self, costs: torch.Tensor, *, keys: torch.Tensor | np.ndarray | None = None,
                  slot: str = "", remember: bool = True) -> torch.Tensor:
        """argmin_w ĉᵀw for each row of `costs` (canonical space), as a float64 tensor on
        costs' device. `keys` name the samples (with `slot` naming the caller) so a solver
        that warm-starts can start each from its last solution; with `remember`, the
        solutions join the pool (evaluation passes False: a test set's solutions in NCE's
        pool would leak it into training)."""
        costs = torch.atleast_2d(costs.detach()).to(torch.float64)
        if not bool(torch.isfinite(costs).all()):
            raise DflError("the predictor's outputs are not finite (NaN or inf)",
                           hint=NON_FINITE_HINT)
        if keys is not None:
            keys = torch.as_tensor(keys, dtype=torch.int64).flatten()
        try:
            w = self.solver.solve(costs, keys, slot)
        except DflError as exc:
            if getattr(exc, "status", None) == "unbounded":
                error = unbounded_at(self.inst, self.form, costs.cpu().numpy())
                error.status = "unbounded"  # (a data set names its sample: true_samples)
                raise error from None
            raise exc.located(self.inst.model.filename, None) from None
        if remember:
            self._remember(w)
        return w

    def solve(self, costs: np.ndarray | torch.Tensor, *, keys=None, slot: str = "",
              remember: bool = True) -> Batch:
        """`decisions` as numpy arrays, with the canonical objectives (`value`)."""
        costs_t = torch.as_tensor(np.asarray(costs, dtype=float)) if not isinstance(
            costs, torch.Tensor) else costs
        costs_t = torch.atleast_2d(costs_t.detach()).to(torch.float64)
        w = self.decisions(costs_t, keys=keys, slot=slot, remember=remember)
        return Batch(w.cpu().numpy(), self.value(costs_t, w.to(costs_t.device)).cpu().numpy())

    def _remember(self, w: torch.Tensor) -> None:
        rows = np.unique(np.round(w.cpu().numpy(), 9), axis=0)
        for row in rows:
            self.pool.setdefault(pool_key(row), row)

    def solve_theta(self, theta: np.ndarray | torch.Tensor) -> Batch:
        """Decisions for predicted params θ (B, n_theta)."""
        theta_t = torch.as_tensor(np.asarray(theta) if not isinstance(theta, torch.Tensor)
                                  else theta.detach().cpu(), dtype=torch.float64)
        return self.solve(self.costs(theta_t))

    def seed_pool(self, solutions: np.ndarray) -> None:
        """Add known solutions (a training set's w*) to the pool."""
        for row in np.asarray(solutions):
            self.pool.setdefault(pool_key(row), row)

    def pool_decisions(self, costs: torch.Tensor) -> torch.Tensor:
        """The pool's best solution for each cost vector (rows of `costs`, any leading axes):
        the cached answer of solution caching (Mulamba et al., IJCAI 2021), no solver call."""
        pool = torch.as_tensor(self.pool_array(), dtype=torch.float64, device=costs.device)
        scores = costs.detach().to(pool) @ pool.T
        if self.form.is_qp:  # + each pool point's ½wᵀPw
            scores = scores + self.value(torch.zeros_like(pool), pool)
        return pool[scores.argmin(-1)]

    def pool_array(self) -> np.ndarray:
        return np.stack(list(self.pool.values())) if self.pool else np.zeros((0, self.n))

    def close(self) -> None:
        self.solver.close()

    def __del__(self) -> None:  # pragma: no cover - best effort
        try:
            self.close()
        except Exception:
            pass
