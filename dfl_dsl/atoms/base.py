"""What every atom knows, as CVXPY's atoms do: its arity, shape, sign, curvature and
monotonicity (`apply` composes them by the DCP rules of Grant, Boyd & Ye, "Disciplined convex
programming", 2006), how it is evaluated on data and on symbols (`evaluate`), and how each
backend family takes it: numpy and torch values, a CVXPY expression, and an epigraph lowering
for the LP/QP backends.

A family module subclasses `Atom` (or `Elementwise`, `GroupReduction`) and fills in what it
has; `registry.ATOMS` lists one instance per atom. A lowering an atom lacks says so: the
checker, the reductions and the backends read these attributes instead of keeping tables of
atom names.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from ..check.info import Curv, Dim, Info, Sign
from ..errors import DflError

if TYPE_CHECKING:  # the evaluation's modules (scipy.sparse) are imported where they are used:
    # the checker reads an atom's DCP facts without them
    from .. import ast
    from ..evaluate.frame import Frame
    from ..evaluate.nonlinear import AtomNode
    from ..evaluate.poly import Poly
    from ..evaluate.values import Val

INCR, DECR, NONMONO = "increasing", "decreasing", "non-monotone"


def by_sign(arg: Info) -> str:
    """The monotonicity of a function of |x| that grows with it (abs, the norms, huber):
    increasing on nonnegative arguments, decreasing on nonpositive ones."""
    if arg.sign.nonneg:
        return INCR
    return DECR if arg.sign.nonpos else NONMONO


class AtomError(Exception):
    """Raised by an atom on bad arguments; `arg` is the index of the offending argument."""

    def __init__(self, message: str, arg: int | None = None, hint: str | None = None) -> None:
        super().__init__(message)
        self.arg = arg
        self.hint = hint


class Evaluating(Protocol):
    """What an atom asks of the evaluator (`evaluate.evaluator.Evaluator`)."""

    width: int  # the columns of z = [x; θ]

    def number(self, node: ast.Expr, frame: Frame) -> Val: ...

    def int_scalar(self, node: ast.Expr, frame: Frame, what: str) -> int: ...


class Atom:
    name = ""
    nargs: tuple[int, int] = (1, 1)
    curvature = Curv.UNKNOWN  # curvature of the function itself
    smooth = True
    linear = False  # a linear map of its arguments (passes degrees through)
    data_args: tuple[int, ...] = ()  # arguments that must be data
    written = True  # a function a model calls by name (`power` is written `^`)
    pwl = False  # piecewise linear: its epigraph rows are linear (LP-representable)
    risk = False  # aggregates a loss over the scenarios of `uncertain` params
    scm = False  # a concave nondecreasing φ of the SCM class (sum of concave over modular)
    stiefel_penalty: str | None = None  # the separable h(X) of a STIEFEL model it stands for
    ball = False  # `atom(x) <= r` is a norm ball whose structure the lowering declares
    drawn = False  # a random draw (atoms/random.py): only where data is computed

    # ---- shape and sign
    def shape(self, args: Sequence[Info]) -> tuple[Dim, ...]:
        return args[-1].shape

    def sign(self, args: Sequence[Info]) -> Sign:
        return Sign.UNKNOWN

    def monotonicity(self, i: int, args: Sequence[Info]) -> str:
        return NONMONO

    def vdeg(self, args: Sequence[Info]) -> int | None:
        degrees = [a.vdeg for a in args]
        if any(d is None for d in degrees):
            return None
        if self.linear:
            return max(degrees, default=0)
        return 0 if all(d == 0 for d in degrees) else None

    def ldeg(self, args: Sequence[Info]) -> int | None:
        """The degree once the reductions have lowered the atom (`Info.ldeg`): a linear map
        keeps its arguments' degree, a piecewise-linear atom of linear arguments is linear,
        and an atom of data is data."""
        degrees = [a.ldeg for a in args]
        if any(d is None for d in degrees):
            return None
        if self.linear:
            return max(degrees, default=1)
        if self.pwl or all(not a.has_vars for a in args):
            return 1 if all(d <= 1 for d in degrees) else None
        return None

    def function_curvature(self, sense: str) -> Curv:
        return self.curvature

    # ---- composition
    def apply(self, args: Sequence[Info], sense: str = "minimize") -> Info:
        low, high = self.nargs
        if not low <= len(args) <= high:
            want = f"{low}" if low == high else f"{low} to {high}"
            raise AtomError(f"`{self.name}` takes {want} argument(s), got {len(args)}")
        for i in self.data_args:
            if i < len(args) and not args[i].is_data:
                raise AtomError(f"argument {i + 1} of `{self.name}` must be data", i)
        for i, a in enumerate(args):
            if a.kind not in ("num", "elem"):
                raise AtomError(f"`{self.name}` takes numbers, not a {a.kind}", i)
            if not self.linear and a.pdeg and i not in self.data_args:
                raise AtomError(
                    f"a predicted param enters `{self.name}` nonlinearly",
                    i,
                    "predicted params may only scale variables or shift constraints",
                )
        self.validate(args)
        nonsmooth = any(a.nonsmooth for a in args) or (
            not self.smooth and any(a.has_vars for a in args)
        )
        return Info(
            kind="num",
            shape=self.shape(args),
            integer=False,
            ldeg=self.ldeg(args),
            curv=self.compose(args, sense),
            sign=self.sign(args),
            vdeg=self.vdeg(args),
            pdeg=max((a.pdeg for a in args), default=0),
            udeg=max((a.udeg for a in args), default=0),
            nonsmooth=nonsmooth,
        )

    def validate(self, args: Sequence[Info]) -> None:
        """Atom-specific argument checks (shapes, data-only arguments)."""

    def compose(self, args: Sequence[Info], sense: str) -> Curv:
        if all(a.curv is Curv.CONST for a in args):
            return Curv.CONST
        f = self.function_curvature(sense)
        if f is Curv.AFFINE:
            result = Curv.CONST
            for a in args:
                result = result.plus(a.curv)
            return result
        if f not in (Curv.CONVEX, Curv.CONCAVE):
            return Curv.UNKNOWN
        for i, a in enumerate(args):
            if a.curv in (Curv.CONST, Curv.AFFINE):
                continue
            mono = self.monotonicity(i, args)
            same = Curv.CONVEX if f is Curv.CONVEX else Curv.CONCAVE
            if (a.curv is same and mono == INCR) or (a.curv is same.negate() and mono == DECR):
                continue
            return Curv.UNKNOWN
        return f

    def why_not_dcp(self, args: Sequence[ast.Expr], infos: Sequence[Info]
                    ) -> tuple[str, str] | None:
        """Why a call breaks DCP where the generic explanation ("`f` of a convex expression")
        misses it (`quad_form` of a matrix not declared psd), as (what the call is, hint);
        None: no such reason."""
        return None

    # ---- values (bind and compile)
    def evaluate(self, ev: Evaluating, node: ast.Call, frame: Frame) -> Val:
        """The call's value over the frame: data where its arguments are data, an `AtomNode`
        (inside an `NL`) where they are symbolic."""
        raise NotImplementedError(f"`{self.name}` has no evaluation")

    # ---- lowerings (each backend family reads the one it needs; None/raise: it has none)
    def numpy(self, args: list[np.ndarray], param: Any) -> np.ndarray:
        """Elementwise value on data (`AtomNode.starts` is None)."""
        raise NotImplementedError(f"`{self.name}` has no elementwise numpy form")

    def torch(self, args: list, param: Any):
        """Elementwise value on torch tensors (differentiable), or None: no torch form."""
        return None

    def torch_groups(self, value, groups, param: Any):
        """The reduction of each row group (`groups`: an `atoms.groups.Groups`) of the last
        axis of `value` in torch, or None: no torch form."""
        return None

    def cvxpy(self, args: list, param: Any):
        """The CVXPY expression of an elementwise application, or None: no CVXPY form."""
        return None

    def cvxpy_group(self, arg, param: Any):
        """The CVXPY expression reducing one row group `arg`, or None: no CVXPY form."""
        return None

    def aux_columns(self, node: AtomNode, scenarios: int = 1) -> int:
        """The auxiliary columns `lower` (a risk measure's `aggregate`, over `scenarios`)
        adds for `node` itself, the atoms nested in its arguments not counted: a reduction
        counts them first, so every polynomial it makes has its final width."""
        return 0

    def lower(self, node: AtomNode, weights, sign: float, low) -> Poly:
        """The epigraph lowering for the LP/QP backends (`low`: an `epigraph.Lowering`):
        auxiliary columns and rows whose optimum is the atom's value, and the Poly that
        replaces `weights` times the node's rows; `sign` +1 where it is minimized or bounded
        from above, -1 maximized or bounded from below."""
        raise DflError(f"`{self.name}` can't be turned into linear constraints")


class Elementwise(Atom):
    """f applied entry by entry: data in numpy, symbols as one `AtomNode` over all rows."""

    def shape(self, args):
        return args[0].shape

    def evaluate(self, ev, node, frame):
        args = [ev.number(a, frame) for a in node.args]
        return self.elementwise(ev, args[:1], self.param_of(ev, node, frame, args))

    def param_of(self, ev: Evaluating, node: ast.Call, frame: Frame, args: list[Val]) -> Any:
        """The atom's data parameter (`huber`'s M), from its other arguments."""
        return None

    def elementwise(self, ev: Evaluating, args: list[Val], param: Any = None) -> Val:
        from ..evaluate.nonlinear import NL, AtomNode
        from ..evaluate.values import EvalError, Val

        (arg,) = args
        if not arg.symbolic:
            data = np.asarray(arg.payload, dtype=float)
            with np.errstate(all="ignore"):
                out = self.numpy([data], param)
            if not np.all(np.isfinite(out)) and np.all(np.isfinite(data)):
                raise EvalError(f"`{self.name}` is undefined for some of these values")
            return Val(out, arg.framed, arg.shape)
        node = AtomNode(self.name, (arg.payload,), arg.payload.rows, None, param)
        return Val(NL.of(node, ev.width), arg.framed, arg.shape)


class Named(Elementwise):
    """An elementwise atom whose numpy, torch and CVXPY functions all bear its name
    (`np.sqrt`, `Tensor.sqrt`, `cp.sqrt`)."""

    def numpy(self, args, param):
        return getattr(np, self.name)(args[0])

    def torch(self, args, param):
        return getattr(args[0], self.name)()

    def cvxpy(self, args, param):
        import cvxpy as cp

        return getattr(cp, self.name)(args[0])


class GroupReduction(Atom):
    """f of a whole array (a norm, `sum_squares`, `log_sum_exp`): one output per frame row,
    an `AtomNode` with row groups when the argument is symbolic."""

    def shape(self, args):
        return ()

    def reduce(self, data: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
        """The value on data, reducing `axes`."""
        raise NotImplementedError(f"`{self.name}` has no numpy form")

    def evaluate(self, ev, node, frame):
        return self.grouped(ev, ev.number(node.args[0], frame), frame)

    def grouped(self, ev: Evaluating, arg: Val, frame: Frame) -> Val:
        from ..evaluate.nonlinear import NL, AtomNode
        from ..evaluate.values import EvalError, Val, group_starts

        if not arg.symbolic or not arg.size:  # an empty array holds no symbol: data
            data = (np.asarray(arg.payload, dtype=float) if not arg.symbolic else
                    np.zeros(((frame.n,) if arg.framed else ()) + arg.shape))
            axes = tuple(range(1 if arg.framed else 0, data.ndim))
            out = self.reduce(data, axes)
            if not arg.size and not np.isfinite(out).all():  # log_sum_exp: log 0
                raise EvalError(f"`{self.name}` of an empty array (shape {list(arg.shape)}) "
                                f"is {float(np.ravel(out)[0]):g}", "check the sizes in the data")
            return Val(out, arg.framed, ())
        lead = frame.n if arg.framed else 1
        node = AtomNode(self.name, (arg.payload,), lead, group_starts(lead, arg.size))
        return Val(NL.of(node, ev.width), arg.framed, ())


class PiecewiseLinear(Atom):
    """A convex or concave piecewise-linear atom: its epigraph (`epigraph.lower_piecewise`)
    bounds each argument (elementwise) or each entry of its row group (a reduction) by a
    variable t from above (convex) or below (concave)."""

    pwl = True
    smooth = False
    two_sided = False  # |e|-like: t also bounds -e (abs, norm_inf)
    floor = -np.inf  # a lower bound t may take for granted (pos: 0)

    def aux_columns(self, node, scenarios=1):
        return node.rows  # one t per output row

    def lower(self, node, weights, sign, low):
        from .epigraph import lower_piecewise

        return lower_piecewise(node, weights, sign, low, convex=self.curvature is Curv.CONVEX,
                               two_sided=self.two_sided, floor=self.floor)
