"""The atoms of the language, each a small class that knows its arity, shape, sign, curvature
and monotonicity, as CVXPY's atoms do; `Atom.apply` composes them by the DCP rules
(Grant, Boyd & Ye, "Disciplined convex programming", 2006).
"""

from __future__ import annotations

from collections.abc import Sequence

from .info import Curv, Dim, Info, Sign

INCR, DECR, NONMONO = "increasing", "decreasing", "non-monotone"


class AtomError(Exception):
    """Raised by an atom on bad arguments; `arg` is the index of the offending argument."""

    def __init__(self, message: str, arg: int | None = None, hint: str | None = None) -> None:
        super().__init__(message)
        self.arg = arg
        self.hint = hint


class Atom:
    name = ""
    nargs: tuple[int, int] = (1, 1)
    curvature = Curv.UNKNOWN  # curvature of the function itself
    smooth = True
    linear = False  # a linear map of its arguments (passes degrees through)
    data_args: tuple[int, ...] = ()  # arguments that must be data

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

    def function_curvature(self, sense: str) -> Curv:
        return self.curvature

    # ---- composition
    def apply(self, args: Sequence[Info], sense: str = "minimize") -> Info:
        low, high = self.nargs
        if not low <= len(args) <= high:
            want = f"{low}" if low == high else f"{low} to {high}"
            raise AtomError(f"`{self.name}` takes {want} argument(s), got {len(args)}")
        for i in self.data_args:
            if not args[i].is_data:
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
        vdeg = self.vdeg(args)
        pdeg = max((a.pdeg for a in args), default=0)
        udeg = max((a.udeg for a in args), default=0)
        nonsmooth = any(a.nonsmooth for a in args) or (
            not self.smooth and any(a.has_vars for a in args)
        )
        pwl = all(a.pwl for a in args) and (
            self.name in PWL_ATOMS or all(not a.has_vars for a in args)
        )
        return Info(
            kind="num",
            shape=self.shape(args),
            integer=False,
            pwl=pwl,
            curv=self.compose(args, sense),
            sign=self.sign(args),
            vdeg=vdeg,
            pdeg=pdeg,
            udeg=udeg,
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


class Elementwise(Atom):
    def shape(self, args):
        return args[0].shape


class Abs(Elementwise):
    name, curvature, smooth = "abs", Curv.CONVEX, False

    def sign(self, args):
        return Sign.NONNEG

    def monotonicity(self, i, args):
        if args[i].sign.nonneg:
            return INCR
        return DECR if args[i].sign.nonpos else NONMONO


class Pos(Elementwise):
    name, curvature, smooth = "pos", Curv.CONVEX, False

    def sign(self, args):
        return Sign.NONNEG

    def monotonicity(self, i, args):
        return INCR


class Sqrt(Elementwise):
    name, curvature = "sqrt", Curv.CONCAVE

    def sign(self, args):
        return Sign.NONNEG

    def monotonicity(self, i, args):
        return INCR


class Log(Elementwise):
    name, curvature = "log", Curv.CONCAVE

    def monotonicity(self, i, args):
        return INCR


class Log1p(Log):
    name = "log1p"

    def sign(self, args):
        return Sign.NONNEG if args[0].sign.nonneg else Sign.UNKNOWN


class Exp(Elementwise):
    name, curvature = "exp", Curv.CONVEX

    def sign(self, args):
        return Sign.NONNEG

    def monotonicity(self, i, args):
        return INCR


class PairMax(Atom):
    """Elementwise `max(a, b, ...)` (convex) and `min(a, b, ...)` (concave)."""

    nargs = (2, 8)
    smooth = False

    def __init__(self, name: str) -> None:
        self.name = name
        self.curvature = Curv.CONVEX if name == "max" else Curv.CONCAVE

    def shape(self, args):
        return broadcast([a.shape for a in args])

    def sign(self, args):
        signs = [a.sign for a in args]
        if self.name == "max":
            return Sign.NONNEG if any(s.nonneg for s in signs) else Sign.UNKNOWN
        return Sign.NONPOS if any(s.nonpos for s in signs) else Sign.UNKNOWN

    def monotonicity(self, i, args):
        return INCR


class Norm(Atom):
    """`norm1`, `norm2`, `norm_inf`: entrywise on a matrix, scalar result."""

    curvature = Curv.CONVEX
    smooth = False

    def __init__(self, name: str) -> None:
        self.name = name

    def shape(self, args):
        return ()

    def sign(self, args):
        return Sign.NONNEG

    def monotonicity(self, i, args):
        if args[i].sign.nonneg:
            return INCR
        return DECR if args[i].sign.nonpos else NONMONO


class Nnz(Atom):
    """`nnz(X)`: the number of nonzero entries (the L0 penalty of OBCD); no curvature."""

    name, curvature, smooth = "nnz", Curv.UNKNOWN, False

    def shape(self, args):
        return ()

    def sign(self, args):
        return Sign.NONNEG


class SumSquares(Atom):
    name, curvature = "sum_squares", Curv.CONVEX

    def shape(self, args):
        return ()

    def sign(self, args):
        return Sign.NONNEG

    def vdeg(self, args):
        d = args[0].vdeg
        return None if d is None or d > 1 else 2 * d

    def monotonicity(self, i, args):
        return Norm.monotonicity(self, i, args)


class QuadForm(Atom):
    """`quad_form(x, P)` = xᵀPx; convex when P is declared `psd`."""

    name, nargs, curvature = "quad_form", (2, 2), Curv.CONVEX
    data_args = (1,)

    def shape(self, args):
        return ()

    def validate(self, args):
        x, p = args
        if len(p.shape) != 2:
            raise AtomError("the second argument of `quad_form` must be a square matrix", 1)
        if len(x.shape) != 1:
            raise AtomError("the first argument of `quad_form` must be a vector", 0)
        if not (same_dim(x.shape[0], p.shape[0]) and same_dim(p.shape[0], p.shape[1])):
            raise AtomError(
                f"`quad_form` needs x of length n and P of n x n; got x {fmt(x.shape)} "
                f"and P {fmt(p.shape)}",
                1,
            )

    def function_curvature(self, sense):
        return Curv.CONVEX

    def compose(self, args, sense):
        x, p = args
        if x.curv is Curv.CONST:
            return Curv.CONST
        if x.curv is Curv.AFFINE and p.sign is Sign.NONNEG:  # sign of P stands for `psd`
            return Curv.CONVEX
        return Curv.UNKNOWN

    def sign(self, args):
        return Sign.NONNEG if args[1].sign is Sign.NONNEG else Sign.UNKNOWN

    def vdeg(self, args):
        d = args[0].vdeg
        return None if d is None or d > 1 else 2 * d


class Linear(Atom):
    """Linear maps: whole-array `sum`, `trace`, `diag`."""

    curvature = Curv.AFFINE
    linear = True

    def __init__(self, name: str) -> None:
        self.name = name

    def shape(self, args):
        if self.name in ("sum", "trace"):
            return ()
        (shape,) = [a.shape for a in args]
        if len(shape) == 1:
            return (shape[0], shape[0])
        if len(shape) == 2:
            return (shape[0],)
        raise AtomError("`diag` takes a vector or a square matrix", 0)

    def validate(self, args):
        if self.name == "trace" and len(args[0].shape) != 2:
            raise AtomError("`trace` takes a square matrix", 0)

    def sign(self, args):
        return args[0].sign if self.name != "diag" else args[0].sign.plus(Sign.ZERO)


class Constant(Atom):
    """`eye(n)`, `ones(n)`, `zeros(n)`: constant arrays whose size is int data."""

    curvature = Curv.CONST
    data_args = (0,)

    def __init__(self, name: str) -> None:
        self.name = name

    def shape(self, args):
        n = dim_of(args[0])
        return (n, n) if self.name == "eye" else (n,)

    def sign(self, args):
        return Sign.ZERO if self.name == "zeros" else Sign.NONNEG

    def validate(self, args):
        if args[0].shape != ():
            raise AtomError(f"`{self.name}` takes a scalar size", 0)


class Risk(Atom):
    """Risk aggregators over the scenarios of `uncertain` params: `mean`, `cvar(α, ·)`, `worst`.

    For a minimized loss, `cvar` (Rockafellar & Uryasev, 2000) and `worst` are convex and
    nondecreasing; in a maximized objective they measure the lower tail and are concave.
    """

    def __init__(self, name: str) -> None:
        self.name = name
        self.nargs = (2, 2) if name == "cvar" else (1, 1)
        self.data_args = (0,) if name == "cvar" else ()

    def shape(self, args):
        return args[-1].shape

    def function_curvature(self, sense):
        if self.name == "mean":
            return Curv.AFFINE
        return Curv.CONVEX if sense == "minimize" else Curv.CONCAVE

    def monotonicity(self, i, args):
        return INCR

    def sign(self, args):
        return args[-1].sign

    def vdeg(self, args):
        d = args[-1].vdeg
        if self.name == "mean":
            return d
        return 0 if d == 0 else None

    def apply(self, args, sense="minimize"):
        info = super().apply(args, sense)
        if self.name != "mean" and args[-1].pdeg:
            raise AtomError(f"a predicted param enters `{self.name}` nonlinearly", len(args) - 1)
        if args[-1].shape != ():
            raise AtomError(f"`{self.name}` aggregates a scalar loss over the scenarios", 1)
        return info.but(udeg=0, pdeg=args[-1].pdeg, nonsmooth=info.nonsmooth or self.name != "mean")

    def compose(self, args, sense):
        return super().compose(args[-1:], sense)


def _build() -> dict[str, Atom]:
    atoms: list[Atom] = [Abs(), Pos(), Sqrt(), Log(), Log1p(), Exp(), SumSquares(), QuadForm()]
    atoms += [PairMax("max"), PairMax("min"), Nnz()]
    atoms += [Norm(n) for n in ("norm1", "norm2", "norm_inf")]
    atoms += [Linear(n) for n in ("sum", "trace", "diag")]
    atoms += [Constant(n) for n in ("eye", "ones", "zeros")]
    atoms += [Risk(n) for n in ("mean", "cvar", "worst")]
    return {a.name: a for a in atoms}


ATOMS: dict[str, Atom] = _build()
RISK_ATOMS = frozenset({"mean", "cvar", "worst"})
SCM_CONCAVE = frozenset({"sqrt", "log1p", "min"})
# atoms that an epigraph bridge turns into linear constraints (when the DCP rules hold)
PWL_ATOMS = frozenset(
    {"abs", "pos", "max", "min", "norm1", "norm_inf", "sum", "trace", "diag"}
    | {"mean", "cvar", "worst"}
)


# ------------------------------------------------------------------ shape helpers
def same_dim(a: Dim, b: Dim) -> bool:
    """Not *definitely* different (symbolic sizes are only known with data)."""
    return a is None or b is None or a == b or not (isinstance(a, int) and isinstance(b, int))


def definitely_different(a: Dim, b: Dim) -> bool:
    return not same_dim(a, b)


def broadcast(shapes: Sequence[tuple[Dim, ...]]) -> tuple[Dim, ...]:
    """numpy broadcasting of symbolic shapes; raises AtomError on a definite mismatch."""
    ndim = max((len(s) for s in shapes), default=0)
    out: list[Dim] = []
    for axis in range(ndim):
        size: Dim = 1
        for s in shapes:
            k = axis - (ndim - len(s))
            if k < 0:
                continue
            d = s[k]
            if d == 1:
                continue
            if size == 1:
                size = d
            elif definitely_different(size, d):
                raise AtomError(f"shapes {' and '.join(fmt(s) for s in shapes)} don't match")
            elif isinstance(d, int) or size is None:
                size = d
        out.append(size)
    return tuple(out)


def fmt(shape: tuple[Dim, ...]) -> str:
    if not shape:
        return "scalar"
    return "[" + ", ".join("?" if d is None else str(d).lstrip("#") for d in shape) + "]"


def dim_of(info: Info) -> Dim:
    return info.dim
