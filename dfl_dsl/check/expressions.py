"""The checker's rules for expressions: each node's `Info` (shape, curvature, sign, degrees)
by the DCP rules of CVXPY, atoms by their own facts (atoms/registry.py)."""

from __future__ import annotations

from .. import ast
from ..atoms.base import AtomError
from ..atoms.registry import ATOMS, FUNCTIONS
from ..atoms.shapes import broadcast, definitely_different, fmt
from ..errors import DflError, did_you_mean
from ..evaluate.set_functions import SET_FUNCTIONS
from .combine import (
    Scope,
    combine,
    compose,
    degree,
    describe,
    higher,
    scale,
    statement_kind,
    which_param,
)
from .info import BOOL, Curv, Dim, Info, Sign
from .symbols import Indexed, SetSymbol, Symbol


class ExpressionRules:
    """Mixed into `Checker`: `expr` and one method per expression node."""

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
            if symbol.index is not None:
                raise DflError(f"the set `{node.id}` is indexed: write `{node.id}[...]`",
                               node.pos, hint=f"declared on line {symbol.line}")
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
                f"the {statement_kind(later)} `{node.id}` can't be used inside an expression",
                node.pos,
            )
        if later is not None and later is self._current:
            raise DflError(
                f"`{node.id}` refers to itself",
                node.pos,
                hint=f"the {statement_kind(later)} `{node.id}` can't be used in its own "
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
        unnamed = next((h for h in (_unnamed_dummy(owner, node.id) for owner in
                                    [*reversed(self._reductions), self._current]) if h), None)
        if unnamed and (hint is None or hint == f"did you mean `{node.id.upper()}`?"):
            hint = unnamed
        if hint is None and scope:
            bound = ", ".join(f"`{d}`" for d in scope)
            hint = f"the dummies in scope here are {bound}"
        raise DflError(f"unknown name `{node.id}`", node.pos, hint=hint)

    def _e_Subscript(self, node: ast.Subscript, scope: Scope) -> Info:
        if isinstance(node.base, ast.Name) and node.base.id not in scope:
            symbol = self._lookup(node.base, scope)
            if isinstance(symbol, SetSymbol):
                return self._family(node, symbol, scope)
        args = [self.expr(a, scope) for a in node.args]
        for arg, info in zip(node.args, args, strict=True):
            if not info.is_data:
                raise DflError("an index must be data, not a variable or predicted param", arg.pos)
            if info.kind not in ("num", "elem", "set") or (
                info.kind == "set" and not isinstance(arg, ast.Range)
            ):
                raise DflError(f"can't index with {describe(info)}", arg.pos)
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
                f"too many subscripts: {len(args)} for {describe(whole)}",
                node.pos,
            )
        shape: list[Dim] = []
        for arg in node.args:
            if isinstance(arg, ast.Range):
                if arg.step is not None:
                    raise DflError("a slice takes no `by` step", arg.step.pos,
                                   hint="index over the range instead: `{i in a..b by k}`")
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
        if node.func in SET_FUNCTIONS:
            return self._set_function(node, scope)
        # (`#rising`, which no model can write, stands in a rewritten piecewise-linear term)
        atom = FUNCTIONS.get(node.func) if node.func[0] != "#" else ATOMS[node.func]
        if atom is None:
            declared = self.symbols.get(node.func)
            hint = did_you_mean(node.func, [*FUNCTIONS, *SET_FUNCTIONS])
            if declared is not None and declared.kind in ("param", "var", "expr"):
                hint = f"`{node.func}` is a {declared.kind}: index it with brackets, " \
                       f"`{node.func}[...]`"
            raise DflError(f"unknown function `{node.func}`", node.pos, hint=hint)
        if atom.drawn:
            self._where_drawn(node)
        args = [self.expr(a, scope) for a in node.args]
        try:
            return atom.apply(args, self._sense)
        except AtomError as exc:
            at = node.pos
            if exc.arg is not None and exc.arg < len(node.args):
                at = node.args[exc.arg].pos
            raise DflError(str(exc), at, hint=exc.hint) from None

    def _where_drawn(self, node: ast.Call) -> None:
        """A random draw computes data, once per bind: in a param, a set or a check. In a
        variable, an objective or a constraint it would be drawn again at each compile."""
        if not isinstance(self._current, (ast.ParamDecl, ast.SetDecl, ast.Check)):
            raise DflError(f"`{node.func}` draws random data; it can be used only where data "
                           "is computed (a param, a set, a check)", node.pos,
                           hint=f"draw into a param (`param w := {node.func}(...);`) and use "
                                "the param here")

    def _e_BinOp(self, node: ast.BinOp, scope: Scope) -> Info:
        left = self.expr(node.left, scope)
        right = self.expr(node.right, scope)
        if node.op in ("*", "cross") and left.kind == "set" and right.kind == "set":
            dims = (left.set_dim, right.set_dim)
            width = None if None in dims else dims[0] + dims[1]
            return Info(kind="set", set_dim=width, integer=left.integer and right.integer)
        if node.op == "cross":
            side = node.left if left.kind != "set" else node.right
            raise DflError(f"`cross` is the product of sets, got {describe(self.info(side))}",
                           side.pos, hint="`*` multiplies numbers")
        for side, info in ((node.left, left), (node.right, right)):
            if info.kind not in ("num", "elem"):
                raise DflError(
                    f"`{node.op}` needs numbers, got {describe(info)}", side.pos,
                    hint="as a number, write `(if COND then 1 else 0)`" if info.kind == "bool"
                    else None)
        if node.op == "@":
            return self._matmul(node, left, right)
        if node.op in ("mod", "div"):
            return integer_division(node, left, right)
        try:
            shape = broadcast([left.shape, right.shape])
        except AtomError as exc:
            raise DflError(str(exc), node.pos) from None
        if node.op in "+-":
            return combine(left, right, node.op).but(shape=shape)
        if node.op == "/":
            if right.has_vars or right.pdeg or right.udeg:
                what = "variables" if right.has_vars else "predicted or uncertain params"
                raise DflError(
                    f"can only divide by data: a divisor with {what} makes a ratio, which has no "
                    "DCP rule here (it would need a general nonlinear solver)",
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
                f"{which_param(left if left.pdeg or left.udeg else right)} multiplies a "
                "nonlinear expression of the variables",
                node.pos,
                hint=f"{kind} params may only scale variables (affine in the param)",
            )
        if left.curv is Curv.CONST:
            curv = scale(right.curv, left.sign)
        elif right.curv is Curv.CONST:
            curv = scale(left.curv, right.sign)
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
            if left.has_vars and right.has_vars else higher(left.ldeg, right.ldeg),
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
            raise DflError(f"{which_param(base)} enters `^` nonlinearly", node.pos)
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
            curv = compose(Curv.CONVEX, base, incr=base.sign.nonneg or None, decr=base.sign.nonpos)
            if not even and not base.sign.nonneg:
                curv = Curv.UNKNOWN
        elif 0 < p < 1:
            curv = compose(Curv.CONCAVE, base, incr=True, decr=False)
        else:
            curv = compose(Curv.CONVEX, base, incr=False, decr=True)
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
                raise DflError(f"can't compare {describe(info)}", operand.pos)
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
            vdeg=max(degree(i) for i in infos),
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
        parts = node.element.items if isinstance(node.element, ast.Tuple) else (node.element,)
        for part in parts:
            element = self.expr(part, scope)
            if not element.is_data:
                raise DflError("`in` tests data, not variables", part.pos)
            if len(parts) > 1 and (element.kind not in ("num", "elem") or element.shape != ()):
                raise DflError(f"a tuple holds elements, not {describe(element)}", part.pos)
        the_set = self.expr(node.set, scope)
        if the_set.kind != "set":
            raise DflError(f"`in` needs a set, got {describe(the_set)}", node.set.pos)
        if the_set.set_dim is not None and the_set.set_dim != len(parts):
            raise DflError(
                f"the set holds {the_set.set_dim}-tuples, tested here with "
                f"{_tuple_words(len(parts))}",
                node.element.pos,
            )
        return BOOL

    def _e_IfThenElse(self, node: ast.IfThenElse, scope: Scope) -> Info:
        cond = self.expr(node.cond, scope)
        self._require_condition(cond, node.cond)
        then = self._number(node.then, scope)
        orelse = self._number(node.orelse, scope)
        shape = broadcast([then.shape, orelse.shape])
        merged = combine(then, orelse, "+")
        sign = then.sign if then.sign is orelse.sign else (
            Sign.NONNEG if then.sign.nonneg and orelse.sign.nonneg else
            Sign.NONPOS if then.sign.nonpos and orelse.sign.nonpos else Sign.UNKNOWN
        )
        return merged.but(shape=shape, sign=sign, integer=then.integer and orelse.integer)

    def _e_Reduce(self, node: ast.Reduce, scope: Scope) -> Info:
        inner = self.index(node.index, scope)
        self._reductions.append(node)
        try:
            body = self._number(node.body, inner)
        finally:
            self._reductions.pop()
        if node.op == "sum":
            return body.but(value=None, dim=None)
        if node.op == "prod" and not body.is_data:
            raise DflError("`prod{...}` takes data, not variables or predicted/uncertain params",
                           node.body.pos, hint="a product of variables is not linear or convex")
        if node.op == "prod":
            return body.but(value=None, dim=None,
                            sign=Sign.NONNEG if body.sign.nonneg else Sign.UNKNOWN)
        if body.is_data:
            return body.but(value=None, dim=None)
        if body.pdeg:  # (scenarios of an uncertain one are fixed one by one, as in `max(a, b)`)
            raise DflError(f"a predicted param enters `{node.op}{{...}}` nonlinearly", node.pos)
        f = Curv.CONVEX if node.op == "max" else Curv.CONCAVE
        curv = compose(f, body, incr=True, decr=False)
        return body.but(curv=curv, vdeg=None, nonsmooth=True, value=None, dim=None,
                        ldeg=1 if body.pwl else None)

    def _number(self, node: ast.Expr, scope: Scope) -> Info:
        info = self.expr(node, scope)
        if info.kind not in ("num", "elem"):
            raise DflError(f"expected a number, got {describe(info)}", node.pos)
        return info


# ---------------------------------------------------------------------- helpers
def _tuple_words(n: int) -> str:
    return "one element" if n == 1 else f"{n}-tuples"


def integer_division(node: ast.BinOp, left: Info, right: Info) -> Info:
    """AMPL's `a mod b` and `a div b`: arithmetic on the data (as `i mod 2` in a filter)."""
    for side, info in ((node.left, left), (node.right, right)):
        if not info.is_data:
            raise DflError(f"`{node.op}` takes data, not variables or predicted/uncertain "
                           "params", side.pos)
    try:
        shape = broadcast([left.shape, right.shape])
    except AtomError as exc:
        raise DflError(str(exc), node.pos) from None
    # the remainder has the dividend's sign, the quotient is truncated toward zero
    sign = left.sign if node.op == "mod" else left.sign.times(right.sign)
    return Info(shape=shape, integer=left.integer and right.integer, sign=sign)


def _unnamed_dummy(owner, name: str) -> str | None:
    """The hint for a dummy an index never named, the statement's or a reduction's:
    `var x{I} <= cap[i];`, `sum{I} c[i]` (AMPL too needs `{i in I}`), which `did you mean
    `I`?` misled."""
    index = getattr(owner, "index", None)
    if not isinstance(index, ast.SetIndex):
        return None
    bare = [item for item in index.items if not item.names and isinstance(item.set, ast.Name)]
    if len(bare) != 1 or len(index.items) != 1:
        return None
    if not any(isinstance(n, ast.Subscript) and any(isinstance(a, ast.Name) and a.id == name
                                                   for a in n.args) for n in ast.walk(owner)):
        return None  # (used as a subscript: a dummy; anything else, a misspelled name)
    set_name = bare[0].set.id
    return (f"the index `{{{set_name}}}` names no dummy: write `{{{name} in {set_name}}}` "
            f"to use `{name}` for its elements")

