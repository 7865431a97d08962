"""Static checks of a parsed model: names and scopes, types, index arity, shapes, DCP curvature
and sign, and the DPP-style rule that `predicted`/`uncertain` params enter affinely.

Every node's `Info` is recorded (keyed by node identity) for the classifier and the binder.
"""

from __future__ import annotations

from collections.abc import Mapping

from .. import ast
from ..atoms.base import AtomError
from ..atoms.registry import FUNCTIONS
from ..atoms.shapes import broadcast, definitely_different, fmt, same_dim
from ..errors import DflError, did_you_mean
from ..words import article
from .dcp import culprit, fits, flip, snippet
from .info import BOOL, Curv, Dim, Info, Sign
from .symbols import Dummy, Indexed, SetSymbol, Symbol

Scope = Mapping[str, Dummy]
_DOMAINS = ("binary", "integer", "stiefel")


class Checker:
    def __init__(self, model: ast.Model) -> None:
        self.model = model
        self.symbols: dict[str, Symbol] = {}
        self.infos: dict[int, Info] = {}
        self.objective: ast.Objective | None = None
        self.constraints: list[ast.Constraint] = []
        self.constraint_infos: dict[str, Info] = {}
        self._sense = "minimize"
        self._current: ast.Statement | None = None  # the statement being checked

    # ------------------------------------------------------------------ driver
    def run(self) -> None:
        for stmt in self.model.statements:
            if isinstance(stmt, ast.ModelDecl):
                if stmt is not self.model.statements[0]:
                    raise DflError("`model NAME;` must be the first statement", stmt.pos)
                continue
            self._declare(stmt)
            self._current = stmt
            handler = getattr(self, "_" + type(stmt).__name__)
            try:
                handler(stmt)
            except RecursionError:  # the parser caps nesting; this is a last line of defence
                raise DflError(
                    "this statement is nested too deeply to check", stmt.pos
                ) from None
        self._current = None

    def _declare(self, stmt: ast.Statement) -> None:
        name = stmt.name
        if name in self.symbols:
            first = self.symbols[name]
            raise DflError(
                f"`{name}` is declared twice",
                stmt.pos,
                hint=f"the first declaration ({first.kind}) is on line {first.line}",
            )
        if isinstance(stmt, ast.Objective) and self.objective is not None:
            raise DflError(
                "a model has at most one objective",
                stmt.pos,
                hint=f"`{self.objective.name}` on line {self.objective.pos.line} is the "
                "objective already",
            )

    def info(self, node: ast.Node) -> Info:
        return self.infos[id(node)]

    # ------------------------------------------------------------------ statements
    def _SetDecl(self, stmt: ast.SetDecl) -> None:
        dim, integer = None, False  # a set of tuples says so with `within A * B` (or `= ...`)
        for part in (stmt.within, stmt.value):
            if part is None:
                continue
            info = self.expr(part, {})
            if info.kind != "set":
                raise DflError(f"expected a set here, got a {_kind(info)}", part.pos)
            if not info.is_data:
                raise DflError("a set can't depend on variables or predicted params", part.pos)
            if dim is not None and info.set_dim is not None and dim != info.set_dim:
                raise DflError(
                    f"`{stmt.name}` holds {info.set_dim}-tuples but is within a set of "
                    f"{dim}-tuples",
                    part.pos,
                )
            dim = info.set_dim if info.set_dim is not None else dim
            integer = integer or info.integer
        self.symbols[stmt.name] = SetSymbol(stmt.name, stmt, "set", dim=dim or 1, integer=integer)

    def _ParamDecl(self, stmt: ast.ParamDecl) -> None:
        scope, arity, shape = self._domain(stmt.index)
        kinds = set(stmt.kinds)
        if len(kinds) != len(stmt.kinds):
            raise DflError(f"`{stmt.name}` repeats a kind", stmt.pos)
        if {"predicted", "uncertain"} <= kinds:
            raise DflError("a param is either `predicted` or `uncertain`, not both", stmt.pos)
        symbolic = bool(kinds & {"predicted", "uncertain"})
        if symbolic and (stmt.value is not None):
            raise DflError(
                f"a {'predicted' if 'predicted' in kinds else 'uncertain'} param can't be "
                "computed with `=`: its values come from a model or the data",
                stmt.value.pos,
            )
        sign = Sign.UNKNOWN
        element_kind = "num"
        for check in stmt.checks:
            if check.op == "in":
                info = self.expr(check.operand, scope)
                if info.kind != "set":
                    raise DflError(f"`in` needs a set, got a {_kind(info)}", check.operand.pos)
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
        element = Info(
            kind=element_kind,
            integer="int" in kinds,
            sign=sign,
            pdeg=1 if "predicted" in kinds else 0,
            udeg=1 if "uncertain" in kinds else 0,
        )
        for part, what in ((stmt.value, "value"), (stmt.default, "default")):
            if part is None:
                continue
            info = self.expr(part, scope)
            if not info.is_data:
                raise DflError(f"a param's {what} must be computed from data only", part.pos)
            if info.kind == "set":
                raise DflError(f"a param's {what} must be a number, not a set", part.pos)
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
                    raise DflError("a variable's bound must be a number from data", operand.pos)
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
        self._sense = stmt.sense
        info = self.expr(stmt.body, {})
        self._sense = "minimize"
        if info.kind != "num" or info.shape != ():
            raise DflError(
                f"the objective must be a scalar number, got {_describe(info)}", stmt.body.pos
            )
        self.objective = stmt
        self.symbols[stmt.name] = Symbol(stmt.name, stmt, "objective")

    def _Constraint(self, stmt: ast.Constraint) -> None:
        scope, _, _ = self._domain(stmt.index)
        body = stmt.body
        if not isinstance(body, ast.Compare):
            hint = None
            if isinstance(body, ast.BoolOp) and body.op == "and":
                hint = "write one constraint per comparison, or a chain `lo <= e <= hi`"
            elif isinstance(body, (ast.BoolOp, ast.Not, ast.Member)):
                hint = "a constraint can't combine comparisons with `or`, `not` or `in`"
            raise DflError(
                "a constraint must be a comparison with `==`, `<=` or `>=`", body.pos, hint=hint
            )
        self.constraint_infos[stmt.name] = self._constraint_body(body, scope)
        self.constraints.append(stmt)
        self.symbols[stmt.name] = Symbol(stmt.name, stmt, "constraint")

    def _constraint_body(self, body: ast.Compare, scope: Scope) -> Info:
        for op, right in zip(body.ops, body.operands[1:], strict=True):
            if op in ("<", ">"):
                raise DflError(
                    f"strict `{op}` can't be a constraint",
                    _between(body, right),
                    hint=f"use `{op}=`",
                )
            if op == "!=":
                raise DflError("`!=` can't be a constraint", _between(body, right))
        ops = body.ops
        if len(ops) > 2 or (len(ops) == 2 and (ops[0] != ops[1] or "==" in ops)):
            raise DflError(
                f"mixed-direction chained comparison `{body.ops[0]}` ... `{body.ops[1]}`",
                body.operands[1].pos,
                hint="a chain is `lo <= e <= hi` or `hi >= e >= lo`",
            )
        infos = [self.expr(o, scope) for o in body.operands]
        for operand, info in zip(body.operands, infos, strict=True):
            if info.kind not in ("num", "elem"):
                raise DflError(f"can't compare a {_kind(info)} in a constraint", operand.pos)
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
            diff = _combine(left, right, "-").but(shape=shape)
            sides = [(body, diff, body.ops[0])]
        for _node, info, op in sides:
            if len(infos) == 3 or op == "==":
                need = "affine"
            elif op == "<=":
                need = "convex"
            else:
                need = "concave"
            if not fits(info.curv, need):
                self._refuse_constraint(body, op, need)
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
    def _domain(self, index: ast.Index | None) -> tuple[Scope, int | None, tuple[Dim, ...]]:
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
                    f"expected a set after `in`, got {_describe(info)}", item.set.pos
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
            for name in item.names:
                if name in inner:
                    continue  # already bound: this component filters (a join)
                if name in self.symbols:
                    raise DflError(
                        f"dummy `{name}` hides the {self.symbols[name].kind} `{name}`",
                        item.pos,
                        hint="pick another name for the dummy",
                    )
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

    def _require_condition(self, info: Info, node: ast.Expr) -> None:
        if info.kind != "bool":
            raise DflError(f"expected a condition, got {_describe(info)}", node.pos)
        if not info.is_data:
            raise DflError(
                "a condition can only use data and dummies, not variables or predicted params",
                node.pos,
            )

    # ------------------------------------------------------------------ expressions
    def expr(self, node: ast.Expr, scope: Scope) -> Info:
        method = getattr(self, "_e_" + type(node).__name__)
        try:
            info = method(node, scope)
        except AtomError as exc:
            raise DflError(str(exc), node.pos, hint=exc.hint) from None
        self.infos[id(node)] = info
        return info

    def _e_Number(self, node: ast.Number, scope: Scope) -> Info:
        v = node.value
        is_int = isinstance(v, int)
        return Info(integer=is_int, sign=Sign.of(v), value=v, dim=v if is_int else None)

    def _e_String(self, node: ast.String, scope: Scope) -> Info:
        return Info(kind="elem")

    def _e_Name(self, node: ast.Name, scope: Scope) -> Info:
        if node.id in scope:
            return scope[node.id].info
        symbol = self._lookup(node, scope)
        if isinstance(symbol, SetSymbol):
            return Info(kind="set", set_dim=symbol.dim, integer=symbol.integer, sign=Sign.UNKNOWN)
        if isinstance(symbol, Indexed):
            if symbol.kind == "expr" and symbol.index is not None:
                raise DflError(
                    f"`{node.id}` is indexed: write `{node.id}[...]`", node.pos
                )
            dim = node.id if symbol.kind == "param" and symbol.index is None else None
            return symbol.element.but(shape=symbol.shape, dim=dim)
        raise DflError(
            f"the {symbol.kind} `{node.id}` can't be used inside an expression", node.pos
        )

    def _lookup(self, node: ast.Name, scope: Scope) -> Symbol:
        symbol = self.symbols.get(node.id)
        if symbol is not None and symbol.kind != "model":
            return symbol
        later = next(
            (s for s in self.model.statements if getattr(s, "name", None) == node.id
             and not isinstance(s, ast.ModelDecl)),
            None,
        )
        if later is not None and isinstance(later, (ast.Objective, ast.Constraint)):
            raise DflError(
                f"the {_statement_kind(later)} `{node.id}` can't be used inside an expression",
                node.pos,
            )
        if later is not None and later is self._current:
            raise DflError(
                f"`{node.id}` refers to itself",
                node.pos,
                hint=f"the {_statement_kind(later)} `{node.id}` can't be used in its own "
                "definition",
            )
        if later is not None:
            raise DflError(
                f"`{node.id}` is used before its declaration",
                node.pos,
                hint=f"it is declared on line {later.pos.line}; declare it first",
            )
        names = list(scope) + [n for n, s in self.symbols.items() if s.kind != "model"]
        hint = did_you_mean(node.id, names)
        if hint is None and scope:
            bound = ", ".join(f"`{d}`" for d in scope)
            hint = f"the dummies in scope here are {bound}"
        raise DflError(f"unknown name `{node.id}`", node.pos, hint=hint)

    def _e_Subscript(self, node: ast.Subscript, scope: Scope) -> Info:
        args = [self.expr(a, scope) for a in node.args]
        for arg, info in zip(node.args, args, strict=True):
            if not info.is_data:
                raise DflError("an index must be data, not a variable or predicted param", arg.pos)
            if info.kind not in ("num", "elem", "set") or (
                info.kind == "set" and not isinstance(arg, ast.Range)
            ):
                raise DflError(f"can't index with {_describe(info)}", arg.pos)
        base = node.base
        if isinstance(base, ast.Name) and base.id not in scope:
            symbol = self._lookup(base, scope)
            if isinstance(symbol, Indexed) and not symbol.shape_style and not (
                symbol.index is None and symbol.shape  # an array-valued `expr`: sliced below
            ):
                if symbol.index is None:
                    raise DflError(f"`{base.id}` is not indexed", node.pos)
                if symbol.arity is not None and len(args) != symbol.arity:
                    raise DflError(
                        f"`{base.id}` takes {symbol.arity} "
                        f"subscript{'s' if symbol.arity != 1 else ''}, got {len(args)}",
                        node.pos,
                        hint=f"declared on line {symbol.line}",
                    )
                if any(a.kind == "set" for a in args):
                    raise DflError("slices need a numpy-style `[n]` shape", node.pos)
                self.infos[id(base)] = symbol.element.but(shape=symbol.shape)
                return symbol.element
        whole = self.expr(base, scope)
        if whole.kind == "set":
            raise DflError("a set can't be subscripted", node.pos)
        if len(args) > len(whole.shape):
            raise DflError(
                f"too many subscripts: {len(args)} for {_describe(whole)}",
                node.pos,
            )
        shape: list[Dim] = []
        for arg in node.args:
            if isinstance(arg, ast.Range):
                lo, hi = self.info(arg.lo), self.info(arg.hi)
                if lo.value is not None and hi.value is not None:
                    shape.append(int(hi.value) - int(lo.value) + 1)
                else:
                    shape.append(None)
        shape.extend(whole.shape[len(args):])
        return whole.but(shape=tuple(shape), dim=None)

    def _e_Transpose(self, node: ast.Transpose, scope: Scope) -> Info:
        info = self._number(node.operand, scope)
        return info.but(shape=tuple(reversed(info.shape)))

    def _e_Call(self, node: ast.Call, scope: Scope) -> Info:
        atom = FUNCTIONS.get(node.func)
        if atom is None:
            declared = self.symbols.get(node.func)
            hint = did_you_mean(node.func, FUNCTIONS)
            if declared is not None and declared.kind in ("param", "var", "expr"):
                hint = f"`{node.func}` is a {declared.kind}: index it with brackets, " \
                       f"`{node.func}[...]`"
            raise DflError(f"unknown function `{node.func}`", node.pos, hint=hint)
        args = [self.expr(a, scope) for a in node.args]
        try:
            return atom.apply(args, self._sense)
        except AtomError as exc:
            at = node.pos
            if exc.arg is not None and exc.arg < len(node.args):
                at = node.args[exc.arg].pos
            raise DflError(str(exc), at, hint=exc.hint) from None

    def _e_BinOp(self, node: ast.BinOp, scope: Scope) -> Info:
        left = self.expr(node.left, scope)
        right = self.expr(node.right, scope)
        if node.op == "*" and left.kind == "set" and right.kind == "set":
            dims = (left.set_dim, right.set_dim)
            width = None if None in dims else dims[0] + dims[1]
            return Info(kind="set", set_dim=width)
        for side, info in ((node.left, left), (node.right, right)):
            if info.kind not in ("num", "elem"):
                raise DflError(
                    f"`{node.op}` needs numbers, got {_describe(info)}", side.pos
                )
        if node.op == "@":
            return self._matmul(node, left, right)
        try:
            shape = broadcast([left.shape, right.shape])
        except AtomError as exc:
            raise DflError(str(exc), node.pos) from None
        if node.op in "+-":
            return _combine(left, right, node.op).but(shape=shape)
        if node.op == "/":
            if right.has_vars or right.pdeg or right.udeg:
                raise DflError(
                    "can only divide by data",
                    node.right.pos,
                    hint="multiply instead, or move the divisor to the other side",
                )
        return self._product(node, left, right).but(shape=shape)

    def _product(self, node: ast.Expr, left: Info, right: Info) -> Info:
        pdeg, udeg = left.pdeg + right.pdeg, left.udeg + right.udeg
        if left.vdeg is None or right.vdeg is None:
            vdeg = None if (left.has_vars or right.has_vars) else 0
            if left.has_vars and right.has_vars:
                vdeg = None
            elif left.vdeg is None and not right.has_vars:
                vdeg = None
            elif right.vdeg is None and not left.has_vars:
                vdeg = None
        else:
            vdeg = left.vdeg + right.vdeg
            if vdeg > 2:
                vdeg = None
        if pdeg > 1:
            raise DflError(
                "a product of two predicted params is not affine in them",
                node.pos,
                hint="predicted params may only scale variables or shift constraints",
            )
        if udeg > 1:
            raise DflError("a product of two uncertain params is not affine in them", node.pos)
        # plain data scaling an expression that holds a param (`3 * pos(d - x)`) multiplies
        # no param by anything: the expression keeps whatever degree it had in the param
        if (pdeg or udeg) and (vdeg is None or vdeg > 1) and not (left.is_data or right.is_data):
            kind = "predicted" if pdeg else "uncertain"
            raise DflError(
                f"{_which_param(left if left.pdeg or left.udeg else right)} multiplies a "
                "nonlinear expression of the variables",
                node.pos,
                hint=f"{kind} params may only scale variables (affine in the param)",
            )
        if left.curv is Curv.CONST:
            curv = _scale(right.curv, left.sign)
        elif right.curv is Curv.CONST:
            curv = _scale(left.curv, right.sign)
        else:
            curv = Curv.UNKNOWN
        return Info(
            kind="num",
            integer=left.integer and right.integer,
            curv=curv,
            sign=left.sign.times(right.sign),
            vdeg=vdeg,
            pdeg=pdeg,
            udeg=udeg,
            nonsmooth=left.nonsmooth or right.nonsmooth,
            # a product of two variable expressions: quadratic if both are affine
            ldeg=(2 if left.vdeg == right.vdeg == 1 else None)
            if left.has_vars and right.has_vars else _higher(left.ldeg, right.ldeg),
        )

    def _matmul(self, node: ast.BinOp, left: Info, right: Info) -> Info:
        a, b = left.shape, right.shape
        if not a or not b:
            raise DflError("`@` needs vectors or matrices; use `*` for scalars", node.pos)
        if len(a) > 2 or len(b) > 2:
            raise DflError("`@` works on vectors and matrices only", node.pos)
        inner_a = a[-1]
        inner_b = b[0]
        if definitely_different(inner_a, inner_b):
            raise DflError(
                f"shape mismatch in `@`: {fmt(a)} @ {fmt(b)}",
                node.pos,
                hint="the inner sizes must agree",
            )
        shape = tuple(a[:-1]) + tuple(b[1:])
        info = self._product(node, left, right)
        sign = info.sign
        curv = info.curv
        if curv is not Curv.CONST and Curv.CONST not in (left.curv, right.curv):
            curv = Curv.UNKNOWN
        return info.but(shape=shape, sign=sign, curv=curv)

    def _e_Neg(self, node: ast.Neg, scope: Scope) -> Info:
        info = self._number(node.operand, scope)
        value = -info.value if info.value is not None else None
        return info.but(curv=info.curv.negate(), sign=info.sign.negate(), value=value, dim=None)

    def _e_Power(self, node: ast.Power, scope: Scope) -> Info:
        base = self._number(node.base, scope)
        exp = self._number(node.exponent, scope)
        if not exp.is_data or exp.shape != ():
            raise DflError("an exponent must be a scalar constant", node.exponent.pos)
        if base.is_data:
            sign = Sign.NONNEG if base.sign.nonneg else Sign.UNKNOWN
            return base.but(
                integer=base.integer and exp.integer, value=None, dim=None, sign=sign
            )
        if base.pdeg or base.udeg:
            raise DflError(f"{_which_param(base)} enters `^` nonlinearly", node.pos)
        p = exp.value
        if p is None:
            raise DflError(
                "the exponent of a variable expression must be a literal number",
                node.exponent.pos,
                hint="its curvature depends on the exponent, which must be known before the "
                     "data: write the number",
            )
        if p == 1:
            return base
        if p == 0:
            return Info(sign=Sign.NONNEG)
        even = float(p).is_integer() and int(p) % 2 == 0
        vdeg = None
        if p == 2 and base.vdeg is not None and base.vdeg <= 1:
            vdeg = 2 * base.vdeg
        if even or p > 1:
            curv = _compose(Curv.CONVEX, base, incr=base.sign.nonneg or None, decr=base.sign.nonpos)
            if not even and not base.sign.nonneg:
                curv = Curv.UNKNOWN
        elif 0 < p < 1:
            curv = _compose(Curv.CONCAVE, base, incr=True, decr=False)
        else:
            curv = _compose(Curv.CONVEX, base, incr=False, decr=True)
        return base.but(
            curv=curv,
            vdeg=vdeg,
            ldeg=2 if vdeg == 2 else None,
            sign=Sign.NONNEG if even or base.sign.nonneg else Sign.UNKNOWN,
            nonsmooth=base.nonsmooth,
            value=None,
            dim=None,
        )

    def _e_Compare(self, node: ast.Compare, scope: Scope) -> Info:
        infos = [self.expr(o, scope) for o in node.operands]
        for operand, info in zip(node.operands, infos, strict=True):
            if info.kind not in ("num", "elem"):
                raise DflError(f"can't compare {_describe(info)}", operand.pos)
        if len(node.ops) > 1:
            ups = {op for op in node.ops if op in ("<", "<=")}
            downs = {op for op in node.ops if op in (">", ">=")}
            if (ups and downs) or any(op in ("==", "!=") for op in node.ops):
                raise DflError(
                    "mixed-direction chained comparison", node.operands[1].pos,
                    hint="a chain runs one way: `a <= b <= c`",
                )
        shape = broadcast([i.shape for i in infos])
        return BOOL.but(
            shape=shape,
            vdeg=max(_deg(i) for i in infos),
            pdeg=max(i.pdeg for i in infos),
            udeg=max(i.udeg for i in infos),
        )

    def _e_BoolOp(self, node: ast.BoolOp, scope: Scope) -> Info:
        left = self.expr(node.left, scope)
        right = self.expr(node.right, scope)
        for side, info in ((node.left, left), (node.right, right)):
            self._require_condition(info, side)
        return BOOL

    def _e_Not(self, node: ast.Not, scope: Scope) -> Info:
        info = self.expr(node.operand, scope)
        self._require_condition(info, node.operand)
        return BOOL

    def _e_Member(self, node: ast.Member, scope: Scope) -> Info:
        element = self.expr(node.element, scope)
        the_set = self.expr(node.set, scope)
        if the_set.kind != "set":
            raise DflError(f"`in` needs a set, got {_describe(the_set)}", node.set.pos)
        if not element.is_data:
            raise DflError("`in` tests data, not variables", node.element.pos)
        return BOOL

    def _e_IfThenElse(self, node: ast.IfThenElse, scope: Scope) -> Info:
        cond = self.expr(node.cond, scope)
        self._require_condition(cond, node.cond)
        then = self._number(node.then, scope)
        orelse = self._number(node.orelse, scope)
        shape = broadcast([then.shape, orelse.shape])
        merged = _combine(then, orelse, "+")
        sign = then.sign if then.sign is orelse.sign else (
            Sign.NONNEG if then.sign.nonneg and orelse.sign.nonneg else
            Sign.NONPOS if then.sign.nonpos and orelse.sign.nonpos else Sign.UNKNOWN
        )
        return merged.but(shape=shape, sign=sign, integer=then.integer and orelse.integer)

    def _e_Reduce(self, node: ast.Reduce, scope: Scope) -> Info:
        inner = self.index(node.index, scope)
        body = self._number(node.body, inner)
        if node.op == "sum":
            return body.but(value=None, dim=None)
        if body.is_data:
            return body.but(value=None, dim=None)
        if body.pdeg:  # (scenarios of an uncertain one are fixed one by one, as in `max(a, b)`)
            raise DflError(f"a predicted param enters `{node.op}{{...}}` nonlinearly", node.pos)
        f = Curv.CONVEX if node.op == "max" else Curv.CONCAVE
        curv = _compose(f, body, incr=True, decr=False)
        return body.but(curv=curv, vdeg=None, nonsmooth=True, value=None, dim=None,
                        ldeg=1 if body.pwl else None)

    def _e_Range(self, node: ast.Range, scope: Scope) -> Info:
        lo = self.expr(node.lo, scope)
        hi = self.expr(node.hi, scope)
        for side, info in ((node.lo, lo), (node.hi, hi)):
            if not info.is_data or info.kind not in ("num", "elem") or info.shape != ():
                raise DflError("a range's bounds must be integer data", side.pos)
            if info.value is not None and not float(info.value).is_integer():
                raise DflError(f"a range's bound must be an integer, got {info.value}", side.pos)
        return Info(kind="set", set_dim=1, integer=True, sign=lo.sign)

    def _e_SetLiteral(self, node: ast.SetLiteral, scope: Scope) -> Info:
        for element in node.elements:
            info = self.expr(element, scope)
            if not info.is_data or info.kind not in ("num", "elem") or info.shape != ():
                raise DflError("a set literal lists elements (numbers or strings)", element.pos)
        integer = all(isinstance(e, ast.Number) and isinstance(e.value, int) for e in node.elements)
        return Info(kind="set", set_dim=1, integer=integer and bool(node.elements))

    def _e_SetOp(self, node: ast.SetOp, scope: Scope) -> Info:
        left = self.expr(node.left, scope)
        right = self.expr(node.right, scope)
        for side, info in ((node.left, left), (node.right, right)):
            if info.kind != "set":
                raise DflError(f"`{node.op}` needs sets, got {_describe(info)}", side.pos)
        if left.set_dim and right.set_dim and left.set_dim != right.set_dim:
            raise DflError(
                f"`{node.op}` of sets of {left.set_dim}-tuples and {right.set_dim}-tuples",
                node.pos,
            )
        integer = left.integer and (right.integer or node.op != "union")
        return Info(kind="set", set_dim=left.set_dim or right.set_dim, integer=integer)

    def _number(self, node: ast.Expr, scope: Scope) -> Info:
        info = self.expr(node, scope)
        if info.kind not in ("num", "elem"):
            raise DflError(f"expected a number, got {_describe(info)}", node.pos)
        return info


# ---------------------------------------------------------------------- helpers
def _higher(a: int | None, b: int | None) -> int | None:
    """The degree of a sum (None, no degree, wins)."""
    return None if a is None or b is None else max(a, b)


def _which_param(info: Info) -> str:
    return "a predicted param" if info.pdeg else "an uncertain param"


def _combine(left: Info, right: Info, op: str) -> Info:
    rcurv = right.curv.negate() if op == "-" else right.curv
    rsign = right.sign.negate() if op == "-" else right.sign
    if left.vdeg is None or right.vdeg is None:
        vdeg = None
    else:
        vdeg = max(left.vdeg, right.vdeg)
    value = None
    if left.value is not None and right.value is not None:
        value = left.value + right.value if op == "+" else left.value - right.value
    return Info(
        kind="num",
        integer=left.integer and right.integer,
        curv=left.curv.plus(rcurv),
        sign=left.sign.plus(rsign),
        vdeg=vdeg,
        pdeg=max(left.pdeg, right.pdeg),
        udeg=max(left.udeg, right.udeg),
        nonsmooth=left.nonsmooth or right.nonsmooth,
        ldeg=_higher(left.ldeg, right.ldeg),
        value=value,
        dim=int(value) if value is not None and float(value).is_integer() else None,
    )


def _scale(curv: Curv, sign: Sign) -> Curv:
    if curv in (Curv.CONST, Curv.AFFINE) or sign.nonneg:
        return curv
    if sign.nonpos:
        return curv.negate()
    return Curv.UNKNOWN


def _compose(f: Curv, arg: Info, *, incr: bool | None, decr: bool) -> Curv:
    if arg.curv is Curv.CONST:
        return Curv.CONST
    if arg.curv is Curv.AFFINE:
        return f
    same = f
    if (arg.curv is same and incr) or (arg.curv is same.negate() and decr):
        return f
    return Curv.UNKNOWN


def _deg(info: Info) -> int:
    return 3 if info.vdeg is None else info.vdeg


def _kind(info: Info) -> str:
    return {"num": "number", "elem": "set element", "bool": "condition", "set": "set"}[info.kind]


def _describe(info: Info) -> str:
    if info.kind == "set":
        return "a set"
    if info.kind == "bool":
        return "a condition"
    if info.kind == "elem":
        return "a set element"
    if info.shape:
        return f"an array of shape {fmt(info.shape)}"
    return "a scalar"


def _statement_kind(stmt: ast.Statement) -> str:
    return {
        ast.SetDecl: "set",
        ast.ParamDecl: "param",
        ast.VarDecl: "var",
        ast.ExprDecl: "expr",
        ast.Objective: "objective",
        ast.Constraint: "constraint",
    }.get(type(stmt), "name")


def _between(node: ast.Compare, right: ast.Expr) -> ast.Pos:
    return right.pos


__all__ = ["Checker", "same_dim"]
