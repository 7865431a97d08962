"""The model class of LANGUAGE.md §4, which picks the default backend:
LP, MILP, QP, MIQP, SOCP (convex by DCP), SCM, STIEFEL, with the SMOOTH-POLYTOPE tag where
Frank-Wolfe applies. A model that fits no class is refused with the reason and its position.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from .. import ast
from ..atoms.registry import FUNCTIONS
from ..errors import DflError
from .checker import Checker
from .dcp import culprit, fits
from .info import Info, Sign
from .symbols import Indexed

_DESCRIPTIONS = {
    "LP": "linear program",
    "MILP": "mixed-integer linear program",
    "QP": "convex quadratic program",
    "MIQP": "mixed-integer quadratic program",
    "SOCP": "convex program (DCP; second-order cone / conic)",
    "SCM": "sum of concave over modular functions (submodular) over binary x",
    "STIEFEL": "smooth f(X) + separable nonsmooth h(X) over the Stiefel manifold",
}


@dataclass(frozen=True)
class ModelClass:
    name: str
    tags: tuple[str, ...] = ()
    scenarios: bool = False  # has `uncertain` params: decided over scenarios
    predicted: bool = False

    @property
    def description(self) -> str:
        return _DESCRIPTIONS[self.name]

    @property
    def label(self) -> str:
        text = self.name
        if self.tags:
            text += " (also " + ", ".join(self.tags) + ")"
        if self.scenarios:
            text += " with scenarios"
        return text


def classify(checker: Checker) -> ModelClass:
    """The model's class, or a `DflError` that says why it fits none."""
    try:
        return _classify(checker)
    except RecursionError:  # the parser caps nesting; this is a last line of defence
        where = checker.objective.pos if checker.objective is not None else None
        raise DflError("the model is nested too deeply to classify", where) from None


def _classify(checker: Checker) -> ModelClass:
    vars_ = [s for s in checker.symbols.values() if isinstance(s, Indexed) and s.kind == "var"]
    domains = {v.decl.domain for v in vars_}
    has_int = bool(domains & {"binary", "integer"})
    params = [s for s in checker.symbols.values() if isinstance(s, Indexed) and s.kind == "param"]
    scenarios = any(p.decl.is_uncertain for p in params)
    predicted = any(p.decl.is_predicted for p in params)
    objective = checker.objective
    obj = checker.info(objective.body) if objective is not None else Info()
    sense = objective.sense if objective is not None else "minimize"
    cons = checker.constraint_infos
    # linear rows once bridged: affine, or piecewise-linear atoms in the direction the checker
    # let through (convex bounded above, concave below; none in `==` rows or chains), which
    # the epigraph bridge turns into linear rows (compile/bridges.py)
    affine_cons = all(_linear_row(i) for i in cons.values())
    plain_cons = all(i.vdeg is not None and i.vdeg <= 1 for i in cons.values())

    def make(name: str, tags: tuple[str, ...] = ()) -> ModelClass:
        return ModelClass(name, tags, scenarios, predicted)

    if "stiefel" in domains:
        _check_stiefel(checker, vars_)
        return make("STIEFEL")

    if not affine_cons and has_int:
        name = next(n for n, i in cons.items() if not _linear_row(i))
        decl = checker.symbols[name].decl
        raise DflError(
            "mixed-integer models with nonlinear constraints are not supported",
            decl.body.pos if isinstance(decl, ast.Constraint) else decl.pos,
            hint="keep the constraints linear (abs, pos, max, min, norm1 and norm_inf bounded "
                 "in the convex direction are), or relax the integrality",
        )

    if obj.vdeg is not None and obj.vdeg <= 1:
        if affine_cons:
            return make("MILP" if has_int else "LP")
        return make("SOCP")

    want_ok = obj.curv.is_convex if sense == "minimize" else obj.curv.is_concave
    if obj.vdeg == 2:
        if not want_ok:
            _refuse_curvature(checker, objective)
        if affine_cons:
            if has_int:
                return make("MIQP")
            # (Frank–Wolfe needs bounded columns: epigraph variables may not be)
            return make("QP", _smooth_polytope_tag(checker, vars_) if plain_cons else ())
        return make("SOCP")

    # the objective holds a nonlinear atom applied to variables
    if want_ok and obj.pwl and affine_cons:  # an epigraph bridge makes it linear
        return make("MILP" if has_int else "LP")
    if want_ok and obj.ldeg == 2 and affine_cons and not has_int:  # ... or quadratic
        return make("QP")
    binary_only = domains == {"binary"}
    # (SCM's methods take linear rows over x alone: no epigraph variables)
    if sense == "maximize" and binary_only and affine_cons and _is_scm(checker, objective.body):
        if not plain_cons:
            name = next(n for n, i in cons.items() if not (i.vdeg is not None and i.vdeg <= 1))
            raise DflError(
                "an SCM model (a submodular objective over binary variables) takes affine "
                "constraints only",
                checker.symbols[name].decl.body.pos,
                hint="write the constraint without abs, pos, max, min or norms",
            )
        return make("SCM")
    if not want_ok:
        _refuse_curvature(checker, objective)
    if has_int:
        raise DflError(
            "mixed-integer models with a nonlinear objective are not supported",
            objective.pos,
            hint="the SCM class (maximize sum w*sqrt/log1p/min(a'x) over binary x) is; "
            "otherwise relax the integrality",
        )
    # no SMOOTH-POLYTOPE tag here: the fw backend works on the quadratic standard form
    # (½xᵀPx + cᵀx), which `exp` or `log` has no place in
    return make("SOCP")


def _linear_row(info: Info) -> bool:
    """An affine constraint, or one whose atoms are all piecewise linear (the checker has
    refused those in the wrong direction)."""
    return (info.vdeg is not None and info.vdeg <= 1) or info.pwl


def _smooth_polytope_tag(checker: Checker, vars_: list[Indexed]) -> tuple[str, ...]:
    """Frank-Wolfe's home: a convex quadratic objective (the only caller is the continuous QP
    branch, so it is smooth) over linear constraints on a bounded set. Statically we ask every
    variable to be bounded below and the constraints to cap them."""
    for v in vars_:
        kinds = {a.kind for a in v.decl.attrs}
        if not kinds & {">=", "box"}:
            return ()
    if not checker.constraints and not all(
        "box" in {a.kind for a in v.decl.attrs} for v in vars_
    ):
        return ()
    return ("SMOOTH-POLYTOPE",)


# ---------------------------------------------------------------------- structure
def _terms(node: ast.Expr, sign: int = 1) -> Iterator[tuple[int, ast.Expr]]:
    """Top-level additive terms with their signs."""
    if isinstance(node, ast.BinOp) and node.op in "+-":
        yield from _terms(node.left, sign)
        yield from _terms(node.right, sign if node.op == "+" else -sign)
    elif isinstance(node, ast.Neg):
        yield from _terms(node.operand, -sign)
    else:
        yield sign, node


def _is_scm(checker: Checker, node: ast.Expr) -> bool:
    """c0 + gᵀx + Σ_j w_j φ_j(a_jᵀx), w ≥ 0, a ≥ 0, φ concave nondecreasing (sqrt, log1p,
    min(·, c)): what `compile.scm` builds, in the AMPL and the numpy style alike."""
    info = checker.info(node)
    if info.pdeg or info.udeg:
        return False
    if info.vdeg is not None and info.vdeg <= 1:  # data, or the modular part c0 + gᵀx
        return True
    if isinstance(node, ast.Reduce):
        return node.op == "sum" and _is_scm(checker, node.body)
    if isinstance(node, ast.Call) and node.func == "sum" and len(node.args) == 1:
        return _is_scm(checker, node.args[0])  # numpy style: sum(sqrt(A @ x))
    if isinstance(node, ast.BinOp) and node.op == "+":
        return _is_scm(checker, node.left) and _is_scm(checker, node.right)
    if isinstance(node, ast.BinOp) and node.op == "-":  # only a modular part is subtracted
        right = checker.info(node.right)
        return _is_scm(checker, node.left) and right.vdeg is not None and right.vdeg <= 1
    if isinstance(node, ast.BinOp) and node.op in ("*", "/", "@"):
        # `@` by nonnegative data is a weighted sum too: w @ sqrt(A @ x)
        left, right = checker.info(node.left), checker.info(node.right)
        if left.is_data and left.sign.nonneg and node.op != "/":
            return _is_scm(checker, node.right)
        if right.is_data and right.sign.nonneg:
            return _is_scm(checker, node.left)
        return False
    if isinstance(node, ast.Call) and FUNCTIONS[node.func].scm:
        # φ(aᵀx) or φ(aᵀx, c) with data c (`min`'s cap)
        inner = [checker.info(a) for a in node.args]
        if len(inner) > 2 or not all(i.is_data for i in inner[1:]):
            return False
        a = inner[0]
        return a.vdeg == 1 and a.sign.nonneg
    return False


def _check_stiefel(checker: Checker, vars_: list[Indexed]) -> None:
    objective = checker.objective
    stiefel = [v for v in vars_ if v.decl.domain == "stiefel"]
    if len(vars_) != len(stiefel):
        other = next(v for v in vars_ if v.decl.domain != "stiefel")
        raise DflError(
            "a model with a stiefel variable can't have other variables", other.decl.pos
        )
    if checker.constraints:
        raise DflError(
            "a stiefel model has no constraints besides XᵀX = I (and `>= 0` on X)",
            checker.constraints[0].pos,
        )
    if objective is None:
        raise DflError("a stiefel model minimizes f(X) + h(X) (or maximizes f(X) - h(X))",
                       stiefel[0].decl.pos)
    names = {v.name for v in stiefel}
    penalized = 1 if objective.sense == "minimize" else -1  # h is added, or subtracted
    for sign, term in _terms(objective.body):
        info = checker.info(term)
        if not info.nonsmooth:
            if info.pdeg or info.udeg:
                raise DflError("predicted params are not supported in stiefel models", term.pos)
            continue
        if not _is_separable_penalty(checker, term, names) or sign != penalized:
            wrong = ", and this one is subtracted" if penalized > 0 else (
                ", subtracted from a maximized objective, and this one is added")
            raise DflError(
                "the nonsmooth part of a stiefel objective must be a nonnegative multiple of "
                "`norm1(X)` or `nnz(X)`" + (wrong if sign != penalized else ""),
                term.pos,
            )


def _is_separable_penalty(checker: Checker, node: ast.Expr, names: set[str]) -> bool:
    """A data multiple of norm1(X) or nnz(X); a weight of unknown sign (`param lam;`) passes
    here and the data's value is checked when the form is built (compile/stiefel.py)."""
    if isinstance(node, ast.BinOp) and node.op == "*":
        left, right = checker.info(node.left), checker.info(node.right)
        if left.is_data and left.sign is not Sign.NONPOS:
            return _is_separable_penalty(checker, node.right, names)
        if right.is_data and right.sign is not Sign.NONPOS:
            return _is_separable_penalty(checker, node.left, names)
        return False
    return (
        isinstance(node, ast.Call)
        and FUNCTIONS[node.func].stiefel_penalty is not None
        and len(node.args) == 1
        and isinstance(node.args[0], ast.Name)
        and node.args[0].id in names
    )


# ---------------------------------------------------------------------- DCP explanations
def _refuse_curvature(checker: Checker, objective: ast.Objective) -> None:
    want = "convex" if objective.sense == "minimize" else "concave"
    done = "minimized" if objective.sense == "minimize" else "maximized"
    node, why, hint = culprit(checker, objective.body, want)
    # a part that would fit on its own breaks the rule because it is subtracted
    where = f"subtracted from a {done} objective" if fits(checker.info(node).curv, want) \
        else f"{done} here"
    raise DflError(
        f"objective is not {want}: {why}, {where}",
        node.pos,
        hint=hint or "flip the sense, or rewrite the objective by the DCP rules",
    )
