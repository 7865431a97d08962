"""The model's form (forms.py: its objective, its rows and its traits, as the checker found
them) and the class of LANGUAGE.md §4 it lowers to: LP, MILP, QP, MIQP, SOCP (convex by DCP),
SCM, STIEFEL, with the SMOOTH-POLYTOPE tag where Frank-Wolfe applies. The backends' chains are
planned from the form (backends/chains.py). A model that fits no form is refused with the
reason and its position.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from .. import ast
from ..atoms.registry import FUNCTIONS
from ..errors import DflError
from ..forms import Form, class_name
from .checker import Checker
from .dcp import culprit, fits, flip
from .info import Curv, Info, Sign
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
    form: Form = Form("linear")  # what the backends' chains are planned from (forms.py)
    # a quadratic objective the DCP rules can't prove convex (`sum{i, j} cov[i, j] * x[i] *
    # x[j]`): its assembled Q is checked numerically once the data are bound, as solvers do
    psd_at_bind: bool = False

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
    params = [s for s in checker.symbols.values() if isinstance(s, Indexed) and s.kind == "param"]
    scenarios = any(p.decl.is_uncertain for p in params)
    predicted = any(p.decl.is_predicted for p in params)
    traits = {name for name, has in (
        ("integer", bool(domains & {"binary", "integer"})), ("scenarios", scenarios),
        ("predicted", predicted), ("risk", _has_risk(checker))) if has}

    def make(objective: str, rows: str = "linear", *extra: str,
             psd_at_bind: bool = False) -> ModelClass:
        form = Form(objective, rows, frozenset(traits | set(extra)))
        tags = ("SMOOTH-POLYTOPE",) if "bounded" in form.traits else ()
        return ModelClass(class_name(form), tags, scenarios, predicted, form, psd_at_bind)

    if "stiefel" in domains:
        _check_stiefel(checker, vars_)
        return make("stiefel")
    rows = _rows_form(checker, "integer" in traits)
    numeric = _needs_numeric_psd(checker)
    objective, extra = _objective_form(checker, vars_, rows, "integer" in traits, numeric)
    return make(objective, rows, *extra, psd_at_bind=numeric)


def _rows_form(checker: Checker, has_int: bool) -> str:
    """linear (affine rows), piecewise (atoms the epigraphs make linear: convex ones bounded
    above, concave ones below; the checker refused the other directions) or conic."""
    cons = checker.constraint_infos
    if all(i.vdeg is not None and i.vdeg <= 1 for i in cons.values()):
        return "linear"
    if all(_linear_row(i) for i in cons.values()):
        return "piecewise"
    if has_int:
        name = next(n for n, i in cons.items() if not _linear_row(i))
        decl = checker.symbols[name].decl
        raise DflError(
            "mixed-integer models with nonlinear constraints are not supported",
            decl.body.pos if isinstance(decl, ast.Constraint) else decl.pos,
            hint="keep the constraints linear (abs, pos, max, min, norm1 and norm_inf bounded "
                 "in the convex direction are), or relax the integrality",
        )
    return "conic"


def _needs_numeric_psd(checker: Checker) -> bool:
    """Whether the objective is convex (concave, maximized) only if its products of variables
    make a PSD (NSD) Q: every additive part the DCP rules don't prove is a quadratic
    polynomial of unknown curvature (`cov[i, j] * x[i] * x[j]`). A part besides those that
    breaks the DCP rules is refused here, at that part."""
    objective = checker.objective
    if objective is None:
        return False
    want = "convex" if objective.sense == "minimize" else "concave"
    if fits(checker.info(objective.body).curv, want):
        return False
    products: list[ast.Expr] = []
    bad: list[tuple[ast.Expr, str]] = []
    _split_parts(checker, objective.body, want, products, bad)
    if not products:
        return False  # nothing for a numerical check: the DCP rules' refusal stands
    if bad:
        node, part_want = bad[0]
        found, why, hint = culprit(checker, node, part_want)
        done = "minimized" if objective.sense == "minimize" else "maximized"
        where = f"subtracted from a {done} objective" if part_want != want else f"{done} here"
        raise DflError(f"objective is not {want}: {why}, {where}", found.pos,
                       hint=hint or "flip the sense, or rewrite this part by the DCP rules")
    return True


def _split_parts(checker: Checker, node: ast.Expr, want: str, products: list,
                 bad: list) -> None:
    """The additive parts of `node` the DCP rules don't prove `want`: quadratic polynomials
    of unknown curvature (`products`), and the rest (`bad`, each with what it should be)."""
    info = checker.info(node)
    if fits(info.curv, want):
        return
    if isinstance(node, ast.BinOp) and node.op in ("+", "-"):
        _split_parts(checker, node.left, want, products, bad)
        _split_parts(checker, node.right, want if node.op == "+" else flip(want), products,
                     bad)
    elif isinstance(node, ast.Neg):
        _split_parts(checker, node.operand, flip(want), products, bad)
    elif isinstance(node, ast.Reduce) and node.op == "sum":
        _split_parts(checker, node.body, want, products, bad)
    elif (info.vdeg == 2 and info.udeg == 0 and info.pdeg == 0
          and info.curv is Curv.UNKNOWN):
        products.append(node)
    else:
        bad.append((node, want))


def _objective_form(checker: Checker, vars_: list[Indexed], rows: str,
                    has_int: bool, numeric: bool = False) -> tuple[str, tuple[str, ...]]:
    """The objective's form (forms.py), and the `bounded` trait where Frank–Wolfe applies; a
    model that fits no form is refused with the reason and its position. With `numeric`, the
    objective's convexity is left to the check of its Q at bind (`_needs_numeric_psd`)."""
    objective = checker.objective
    obj = checker.info(objective.body) if objective is not None else Info()
    if obj.vdeg is not None and obj.vdeg <= 1:
        return "linear", ()
    sense = objective.sense
    want_ok = numeric or (obj.curv.is_convex if sense == "minimize" else obj.curv.is_concave)
    if obj.vdeg == 2:
        if not want_ok:
            _refuse_curvature(checker, objective)
        # (Frank–Wolfe needs bounded columns: epigraph variables may not be, but a norm
        # ball's are, and its lowering declares its structure)
        bounded = (not has_int and (rows == "linear" or _balls(checker))
                   and _smooth_polytope(checker, vars_))
        return "quadratic", ("bounded",) if bounded else ()
    # the objective holds a nonlinear atom applied to variables
    if want_ok and obj.pwl:  # an epigraph makes it linear ...
        return "piecewise", ()
    if want_ok and obj.ldeg == 2 and not has_int:  # ... or quadratic
        return "lowerable", ()
    binary_only = {v.decl.domain for v in vars_} == {"binary"}
    # (SCM's methods take linear rows over x alone: no epigraph variables)
    if sense == "maximize" and binary_only and rows != "conic" and _is_scm(checker,
                                                                             objective.body):
        if rows != "linear":
            cons = checker.constraint_infos
            name = next(n for n, i in cons.items() if not (i.vdeg is not None and i.vdeg <= 1))
            raise DflError(
                "an SCM model (a submodular objective over binary variables) takes affine "
                "constraints only",
                checker.symbols[name].decl.body.pos,
                hint="write the constraint without abs, pos, max, min or norms",
            )
        return "scm", ()
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
    return "conic", ()


def _balls(checker: Checker) -> bool:
    """Every constraint is affine or a norm ball `norm1(e) <= data`."""
    for c in checker.constraints:
        info = checker.constraint_infos[c.name]
        if info.vdeg is not None and info.vdeg <= 1:
            continue
        body = c.body
        if not (isinstance(body, ast.Compare) and body.ops == ("<=",)):
            return False
        lhs, rhs = body.operands
        if not (isinstance(lhs, ast.Call) and FUNCTIONS[lhs.func].ball
                and checker.info(rhs).is_data):
            return False
    return True


def _has_risk(checker: Checker) -> bool:
    """A risk measure (mean, cvar, worst) is written in the objective or a constraint."""
    roots = [checker.objective] if checker.objective is not None else []
    roots += checker.constraints
    return any(isinstance(n, ast.Call) and n.func in FUNCTIONS and FUNCTIONS[n.func].risk
               for root in roots for n in ast.walk(root))


def _linear_row(info: Info) -> bool:
    """An affine constraint, or one whose atoms are all piecewise linear (the checker has
    refused those in the wrong direction)."""
    return (info.vdeg is not None and info.vdeg <= 1) or info.pwl


def _smooth_polytope(checker: Checker, vars_: list[Indexed]) -> bool:
    """Frank-Wolfe's home: a convex quadratic objective (the only caller is the continuous QP
    branch, so it is smooth) over linear constraints on a bounded set. Statically we ask every
    variable to be bounded below and the constraints to cap them."""
    for v in vars_:
        kinds = {a.kind for a in v.decl.attrs}
        if not kinds & {">=", "box"}:
            return False
    return bool(checker.constraints) or all(
        "box" in {a.kind for a in v.decl.attrs} for v in vars_)


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
