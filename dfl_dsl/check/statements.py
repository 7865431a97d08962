"""The checker's rules for statements: declarations, the objective and constraints (their
convexity by the DCP rules), and index sets."""

from __future__ import annotations

from .. import ast
from ..atoms.base import AtomError
from ..atoms.shapes import broadcast, fmt
from ..errors import DflError
from ..words import article
from .combine import Scope, between, combine, describe, kind_of
from .dcp import culprit, fits, flip, snippet
from .info import Curv, Dim, Info, Sign
from .members import one_member
from .symbols import Dummy, Indexed, Symbol

_DOMAINS = ("binary", "integer", "stiefel")


class StatementRules:
    """Mixed into `Checker`: one method per statement kind, and index sets."""

    # ------------------------------------------------------------------ statements
    def _ParamDecl(self, stmt: ast.ParamDecl) -> None:
        scope, arity, shape = self._domain(stmt.index)
        kinds = self._param_kinds(stmt)
        symbolic = bool(kinds & {"predicted", "uncertain"})
        if not symbolic:  # AMPL checks a bound per entry after the data, so it may name the
            self.symbols[stmt.name] = Indexed(  # param itself (`>= rate[p-1]`); its value may not
                stmt.name, stmt, "param", index=stmt.index, arity=arity, shape=shape,
                element=Info(kind="elem" if "symbolic" in kinds else "num"))
        sign, element_kind = self._param_checks(stmt, scope, arity, shape, symbolic)
        if not isinstance(stmt.index, ast.SetIndex):  # (MathProg's indexed params may compute
            self.symbols.pop(stmt.name, None)  # entries from other entries: evaluate/lazy.py)
        if kinds & {"binary", "logical"}:
            sign = Sign.NONNEG
        if "logical" in kinds and (symbolic or "symbolic" in kinds or element_kind != "num"):
            raise DflError("a `logical` param holds true or false (1 or 0) from the data",
                           stmt.pos)
        element = Info(
            kind="elem" if "symbolic" in kinds else "bool" if "logical" in kinds else element_kind,
            integer=bool({"int", "binary", "logical"} & kinds),
            sign=sign,
            pdeg=1 if "predicted" in kinds else 0,
            udeg=1 if "uncertain" in kinds else 0,
        )
        for part, what in ((stmt.value, "value"), (stmt.default, "default")):
            if part is None:
                continue
            info = self.expr(part, scope)
            if not info.is_data:
                raise DflError(f"a param's {what} must be computed from data only", part.pos,
                               hint=_symbolic_hint(info, "an `expr`", f"expr {stmt.name}"
                                                   f"{self._text(stmt.index)} = "
                                                   f"{self._text(part)};"))
            if info.kind == "set":
                raise DflError(f"a param's {what} must be a number, not a set", part.pos)
            if info.kind == "bool":  # `default 1 >= 0`: the check was read into the value
                raise DflError(f"a param's {what} must be a number, not a condition", part.pos,
                               hint="a check after a value needs a comma: `default 1, >= 0`")
            if stmt.index is None or isinstance(stmt.index, ast.ShapeIndex):
                want = shape if stmt.index is not None else ()
                if what == "value" and len(info.shape) != len(want) and info.shape != ():
                    raise DflError(
                        f"`{stmt.name}` is declared {fmt(want)} but its value is "
                        f"{fmt(info.shape)}",
                        part.pos,
                    )
            if what == "value" and sign is Sign.UNKNOWN:
                element = element.but(sign=info.sign)
        self.symbols[stmt.name] = Indexed(
            stmt.name, stmt, "param", index=stmt.index, arity=arity, shape=shape, element=element
        )

    def _param_kinds(self, stmt: ast.ParamDecl) -> set[str]:
        """A param's kinds, refused where they contradict each other or its checks."""
        kinds = set(stmt.kinds)
        if len(kinds) != len(stmt.kinds):
            raise DflError(f"`{stmt.name}` repeats a kind", stmt.pos)
        if {"predicted", "uncertain"} <= kinds:
            raise DflError("a param is either `predicted` or `uncertain`, not both", stmt.pos)
        _kind_rules(stmt, kinds, bool(kinds & {"predicted", "uncertain"}))
        return kinds

    def _param_checks(self, stmt: ast.ParamDecl, scope: Scope, arity: int | None,
                      shape: tuple[Dim, ...], symbolic: bool) -> tuple[Sign, str]:
        """The sign a param's checks (`>= 0`, `psd`, ...) give its entries, and whether they
        are set elements (`in SET`)."""
        sign = Sign.UNKNOWN
        element_kind = "num"
        for check in stmt.checks:
            if check.op == "in":
                info = self.expr(check.operand, scope)
                if info.kind != "set":
                    raise DflError(f"`in` needs a set, got a {kind_of(info)}", check.operand.pos)
                element_kind = "elem"
                if symbolic:
                    raise DflError("a predicted/uncertain param can't hold set elements", check.pos)
                continue
            if check.op in ("psd", "symmetric"):
                if arity != 2 and len(shape) != 2:
                    raise DflError(f"`{check.op}` applies to a square matrix param", check.pos)
                if check.op == "psd":
                    sign = Sign.NONNEG  # stands for "positive semidefinite" in quad_form
                continue
            bound = self.expr(check.operand, scope)
            if not bound.is_data or bound.kind not in ("num", "elem"):
                raise DflError("a param's bound must be a number from data", check.operand.pos)
            if check.op in (">=", ">") and bound.sign.nonneg:
                sign = sign if sign is Sign.NONNEG else Sign.NONNEG
            elif check.op in ("<=", "<") and bound.sign.nonpos:
                sign = Sign.NONPOS
        return sign, element_kind

    def _text(self, node: ast.Node | None) -> str:
        """`node`'s source text for a hint ('' for none, `...` when long)."""
        return "" if node is None else snippet(self, node) or "..."

    def _bound_hint(self, stmt: ast.VarDecl, attr: ast.VarAttr, operand: ast.Expr,
                    info: Info) -> str | None:
        """A predicted bound is a constraint: the one to write."""
        entry = f"{stmt.name}[...]" if stmt.index is not None else stmt.name
        lower = attr.kind == ">=" or (attr.kind == "box" and operand is attr.operands[0])
        op = ">=" if lower else "<="
        return _symbolic_hint(info, "a constraint", f"subject to {stmt.name}_bound"
                              f"{self._text(stmt.index)}: {entry} {op} {self._text(operand)};")

    def _VarDecl(self, stmt: ast.VarDecl) -> None:
        scope, arity, shape = self._domain(stmt.index)
        domains = [a for a in stmt.attrs if a.kind in _DOMAINS]
        if len(domains) > 1:
            a, b = domains[0].kind, domains[1].kind
            hint = "a stiefel variable is continuous" if "stiefel" in (a, b) else None
            raise DflError(f"`{b}` can't be combined with `{a}`", domains[1].pos, hint=hint)
        lower: Sign | None = None
        for attr in stmt.attrs:
            for operand in attr.operands:
                info = self.expr(operand, scope)
                if not info.is_data or info.kind not in ("num", "elem"):
                    what = "initial value" if attr.kind == "init" else "bound"
                    raise DflError(f"a variable's {what} must be a number from data",
                                   operand.pos, hint=self._bound_hint(stmt, attr, operand, info))
            if attr.kind in (">=", "box") and self.info(attr.operands[0]).sign.nonneg:
                lower = Sign.NONNEG
            if attr.kind == "binary":
                lower = Sign.NONNEG
        if domains and domains[0].kind == "stiefel":
            if not isinstance(stmt.index, ast.ShapeIndex) or len(stmt.index.dims) != 2:
                raise DflError(
                    "a stiefel variable is a matrix: declare it as `var X[n, r] in stiefel`",
                    domains[0].pos,
                )
            if any(a.kind in ("box", "<=") for a in stmt.attrs):
                raise DflError(
                    "a stiefel variable takes at most a `>= 0` bound", domains[0].pos
                )
        element = Info(curv=Curv.AFFINE, vdeg=1, sign=lower or Sign.UNKNOWN)
        self.symbols[stmt.name] = Indexed(
            stmt.name, stmt, "var", index=stmt.index, arity=arity, shape=shape, element=element
        )

    def _ExprDecl(self, stmt: ast.ExprDecl) -> None:
        scope, arity, shape = self._domain(stmt.index)
        body = self.expr(stmt.body, scope)
        if body.kind == "set":
            raise DflError("an `expr` is a number or an array, not a set", stmt.body.pos)
        if isinstance(stmt.index, ast.ShapeIndex):
            raise DflError("index an `expr` with a set index `{i in S}`", stmt.index.pos)
        element = body
        if stmt.index is None:  # an array-valued macro (`expr r = A @ x - b;`) keeps its shape
            shape, element = body.shape, body.but(shape=(), value=None, dim=None)
        self.symbols[stmt.name] = Indexed(
            stmt.name, stmt, "expr", index=stmt.index, arity=arity, shape=shape, element=element
        )

    def _Objective(self, stmt: ast.Objective) -> None:
        if stmt.index is not None:
            stmt = one_member(stmt, self.member if stmt.name == self.wanted else None)
        self._sense = stmt.sense
        info = self.expr(stmt.body, {})
        self._sense = "minimize"
        if info.kind != "num" or info.shape != ():
            raise DflError(
                f"the objective must be a scalar number, got {describe(info)}", stmt.body.pos
            )
        self.objectives.append(stmt)
        self.symbols[stmt.name] = Symbol(stmt.name, stmt, "objective")

    def _Constraint(self, stmt: ast.Constraint) -> None:
        scope, _, _ = self._domain(stmt.index, keyed=False)
        body = stmt.body
        if not isinstance(body, ast.Compare):
            hint = None
            if isinstance(body, ast.BoolOp) and body.op == "and":
                hint = "write one constraint per comparison, or a chain `lo <= e <= hi`"
            elif isinstance(body, ast.BoolOp) and body.op == "or":
                hint = ("`or` joins parts that are comparisons with `<=`, `>=` or `==` (or "
                        "`and`s of them), under an index whose members all have dummies")
            elif isinstance(body, (ast.BoolOp, ast.Not, ast.Member)):
                hint = "a constraint can't combine comparisons with `not` or `in`"
            raise DflError(
                "a constraint must be a comparison with `==`, `<=` or `>=`", body.pos, hint=hint
            )
        self.constraint_infos[stmt.name] = self._constraint_body(body, scope)
        self.constraints.append(stmt)
        self.symbols[stmt.name] = Symbol(stmt.name, stmt, "constraint")

    def _constraint_body(self, body: ast.Compare, scope: Scope) -> Info:
        for k, (op, right) in enumerate(zip(body.ops, body.operands[1:], strict=True)):
            if op in ("<", ">"):
                raise DflError(
                    f"strict `{op}` can't be a constraint",
                    between(body, right),
                    hint=f"use `{op}=`",
                )
            if op == "!=":
                raise DflError(f"`{body.spelled(k)}` can't be a constraint in a chain",
                               between(body, right), hint=f"write `a {body.spelled(k)} b` as a "
                               "constraint of its own (integer-valued sides)")
        ops = body.ops
        if len(ops) > 2 or (len(ops) == 2 and (ops[0] != ops[1] or "==" in ops)):
            raise DflError(
                f"mixed-direction chained comparison `{body.spelled(0)}` ... `{body.spelled(1)}`",
                body.operands[1].pos,
                hint="a chain is `lo <= e <= hi` or `hi >= e >= lo`",
            )
        infos = [self.expr(o, scope) for o in body.operands]
        for operand, info in zip(body.operands, infos, strict=True):
            if info.kind not in ("num", "elem"):
                raise DflError(f"can't compare a {kind_of(info)} in a constraint", operand.pos)
        if len(infos) == 3:
            for k in (0, 2):
                if infos[k].has_vars:
                    raise DflError(
                        "the outer parts of a chained constraint must be data",
                        body.operands[k].pos,
                    )
            diff = infos[1]
            sides = [(body.operands[1], infos[1], body.ops[0])]
        else:
            left, right = infos
            try:
                shape = broadcast([left.shape, right.shape])
            except AtomError as exc:
                raise DflError(str(exc), body.pos) from None
            diff = combine(left, right, "-").but(shape=shape)
            sides = [(body, diff, body.ops[0])]
        for _node, info, op in sides:
            if len(infos) == 3 or op == "==":
                need = "affine"
            elif op == "<=":
                need = "convex"
            else:
                need = "concave"
            if not fits(info.curv, need):
                self._refuse_constraint(body, body.spelled(0), need)
        return diff

    def _refuse_constraint(self, body: ast.Compare, op: str, need: str) -> None:
        """Explain which side of a constraint breaks the DCP rule, and why."""
        if len(body.operands) == 3:
            self._refuse_chain(body)
            parts = [(body.operands[1], "affine", "middle")]
        else:
            parts = [(body.operands[0], need, "left"), (body.operands[1], flip(need), "right")]
        for node, want, where in parts:
            if fits(self.info(node).curv, want):
                continue
            culprit_node, why, hint = culprit(self, node, want)
            rule = {
                "convex": f"`a {op} b` needs a convex `a` and a concave `b`",
                "concave": f"`a {op} b` needs a concave `a` and a convex `b`",
                "affine": f"both sides of `{op}` must be affine",
            }[need]
            if need == "affine" and self.info(culprit_node).curv in (Curv.CONVEX, Curv.CONCAVE):
                rule += (": a convex expression can only be bounded from above (`<=`), a "
                         "concave one from below (`>=`)")
            if len(body.operands) == 3:
                rule = "the middle of a chained constraint must be affine"
            where = "the middle of the chain" if where == "middle" else f"{where} side of `{op}`"
            if fits(self.info(culprit_node).curv, want):  # it would fit, were it not subtracted
                why += ", and it is subtracted"
            raise DflError(
                f"constraint is not convex: {why} ({where})",
                culprit_node.pos,
                hint=hint or rule,
            )
        raise DflError(f"constraint is not convex: `{op}` needs {need} sides", body.pos)

    def _refuse_chain(self, body: ast.Compare) -> None:
        """`lo <= e <= hi` with a convex (concave) `e`: its upper (lower) bound is convex, the
        other bound is not; name that one."""
        middle = body.operands[1]
        curv = self.info(middle).curv
        if curv not in (Curv.CONVEX, Curv.CONCAVE):
            return
        upward = body.ops[0] == "<="  # lo <= e <= hi, else hi >= e >= lo
        lower, upper = (0, 2) if upward else (2, 0)
        bad = lower if curv is Curv.CONVEX else upper
        side = "left" if bad == 0 else "right"
        bound, keep = ("lower", "upper") if curv is Curv.CONVEX else ("upper", "lower")
        text = snippet(self, middle)
        name = f"`{text}`" if text else "the middle"
        op = "<=" if curv is Curv.CONVEX else ">="
        keep_text = snippet(self, body.operands[upper if curv is Curv.CONVEX else lower])
        split = f"`{text} {op} {keep_text}`" if text and keep_text else f"its {keep} bound"
        how = "linear, by an epigraph" if self.info(middle).pwl else "convex"
        raise DflError(
            f"constraint is not convex: {name} is {curv.value}, so only its {keep} bound is; "
            f"the {bound} bound ({side} side of the chain) is not",
            body.operands[bad].pos,
            hint=f"keep {split} ({how}) and drop the {bound} bound; {article(bound)} "
                 f"{bound} bound on a {curv.value} expression needs integer variables",
        )

    # ------------------------------------------------------------------ indices
    def _domain(self, index: ast.Index | None,
                keyed: bool = True) -> tuple[Scope, int | None, tuple[Dim, ...]]:
        """The scope, arity and shape of a declaration's index. `keyed`: its entries are keyed
        by every component (params, vars, exprs, sets: data and values are laid out by them),
        so no component may match; a constraint's rows are keyed by its new dummies only."""
        if index is None:
            return {}, 0, ()
        if isinstance(index, ast.ShapeIndex):
            dims: list[Dim] = []
            for d in index.dims:
                info = self.expr(d, {})
                if not info.is_data or info.kind == "set" or info.shape != ():
                    raise DflError("a shape's sizes must be int data (`param n : int;`)", d.pos)
                if info.value is not None and not float(info.value).is_integer():
                    raise DflError(f"a shape's size must be an integer, got {info.value}", d.pos)
                dims.append(info.dim)
            return {}, len(dims), tuple(dims)
        scope = self.index(index, {})
        if keyed:
            self._fresh_only(index)
        arity: int | None = 0
        shape: list[Dim] = []
        for item in index.items:
            info = self.info(item.set)
            width = len(item.names) if item.names else info.set_dim
            arity = None if arity is None or width is None else arity + width
            shape.append(f"#{item.set.id}" if isinstance(item.set, ast.Name) else None)
        return scope, arity, tuple(shape)

    def index(self, index: ast.SetIndex, scope: Scope) -> Scope:
        """Check an AMPL-style index; returns the scope with its dummies bound."""
        inner = dict(scope)
        for item in index.items:
            info = self.expr(item.set, inner)
            if info.kind != "set":
                raise DflError(
                    f"expected a set after `in`, got {describe(info)}", item.set.pos
                )
            if not info.is_data:
                raise DflError("an index set can't depend on variables", item.set.pos)
            if item.names and info.set_dim is not None and len(item.names) != info.set_dim:
                if info.set_dim > 1 and len(item.names) == 1:
                    names = ", ".join("abcdefgh"[k] for k in range(info.set_dim))
                    hint = f"bind its components: `({names}) in ...`"
                else:
                    hint = None
                raise DflError(
                    f"the set holds {info.set_dim}-tuples but {len(item.names)} "
                    f"name(s) are bound",
                    item.pos,
                    hint=hint,
                )
            outer = dict(inner)  # what a matching component may use: not this item's names
            for k, name in enumerate(item.names):
                part = item.parts[k] if item.parts else None
                if self._matches(name, part, inner, item.pos if part is None else part.pos):
                    if name not in inner:  # (an outer dummy's filter has nothing to check)
                        self._match_info(part, outer)
                    continue
                element = Info(
                    kind="elem",
                    integer=info.integer,
                    sign=Sign.NONNEG if info.sign.nonneg else Sign.UNKNOWN,
                )
                inner[name] = Dummy(name, element, item)
        if index.filter is not None:
            cond = self.expr(index.filter, inner)
            self._require_condition(cond, index.filter)
        return inner

    def _matches(self, name: str, part: ast.Expr | None, scope: Scope, where: ast.Pos) -> bool:
        """Whether a component of an index item matches instead of binding a fresh dummy: a
        name already bound (an outer dummy), a declared param, a literal or an expression (as
        in AMPL, `sum{(s, j) in ARCS}` with `param s in NODES` is the arcs out of `s`)."""
        if not name:
            return True
        if name in scope:
            return True
        symbol = self.symbols.get(name)
        if symbol is None:
            return False
        if symbol.kind == "param" and part is not None:
            return True
        raise DflError(
            f"dummy `{name}` hides the {symbol.kind} `{name}`",
            where,
            hint="pick another name for the dummy",
        )

    def _fresh_only(self, index: ast.SetIndex) -> None:
        """A declaration's entries are keyed by its dummies, so its tuple patterns bind a new
        dummy in every component (a match would leave a component without a key)."""
        for item in index.items:
            for k, name in enumerate(item.names):
                if not name or name in self.symbols:
                    part = item.parts[k]
                    fresh = "abcdefgh"[k]
                    raise DflError(
                        "a declaration's index binds a new dummy in every tuple component",
                        part.pos,
                        hint=f"bind a new dummy there (`{fresh}`) and filter the index with "
                             f"`: {fresh} == {snippet(self, part) or '...'}`",
                    )

    def _match_info(self, part: ast.Expr, scope: Scope) -> None:
        """A matching tuple component is one element from data, per row of the outer index."""
        info = self.expr(part, scope)
        if info.kind not in ("num", "elem") or info.shape != () or not info.is_data:
            raise DflError(
                f"a tuple component that is not a new dummy matches the set's elements, so it "
                f"must be one element from data, not {describe(info)}",
                part.pos,
            )

    def _require_condition(self, info: Info, node: ast.Expr) -> None:
        """A condition; a number is one too, true where it is not 0 (AMPL and MathProg:
        `exists{j in J} z[i,j]` of a 0/1 param)."""
        if info.kind != "bool" and not (info.kind == "num" and info.shape == ()):
            raise DflError(f"expected a condition, got {describe(info)}", node.pos)
        if not info.is_data:
            raise DflError(
                "a condition can only use data and dummies, not variables or predicted params",
                node.pos,
            )


def _kind_rules(stmt: ast.ParamDecl, kinds: set[str], symbolic: bool) -> None:
    """What a param's kinds rule out. A predicted or uncertain param's values come from the
    data or a model, never from `= e` or `default e` (a default was read by nothing: solve
    still asked the data); a `symbolic` one holds elements, checked by `in` and `!=` only."""
    kind = "predicted" if "predicted" in kinds else "uncertain"
    for part, how in ((stmt.value, "computed with `=`"), (stmt.default, "given a `default`")):
        if symbolic and part is not None:
            raise DflError(f"a {kind} param can't be {how}: its values come from a model or "
                           "the data", part.pos,
                           hint="give its values in the data for `dfl solve`; at train time "
                                "a network (or a generative model) supplies them")
    if "symbolic" in kinds and symbolic:
        raise DflError("a predicted/uncertain param can't be `symbolic`", stmt.pos)
    for check in stmt.checks if "symbolic" in kinds else ():
        if check.op not in ("in", "!="):
            raise DflError(f"`{check.op}` doesn't apply to a symbolic param", check.pos,
                           hint="its values are elements: check them with `in SET` or `<> e`")


def _symbolic_hint(info: Info, what: str, form: str) -> str | None:
    """Where a data-only place holds a `predicted` or `uncertain` param, the form that takes
    one (a user writing `param cost{p in P} = base[p] * g[p];` with `g` predicted means an
    `expr`); None where a variable made it non-data (no such form)."""
    if info.vdeg != 0 or not (info.pdeg or info.udeg):
        return None
    kind = "predicted" if info.pdeg else "uncertain"
    return f"it holds a `{kind}` param (a value per sample, not data): write {what}: `{form}`"
