"""The checker's rules for sets: set declarations (indexed `set S{I}`, `ordered`, `dimen`),
AMPL's set expressions (`setof`, `cross`, `S[i]`), the functions of ordered sets (`first`,
`next`, `ord`, `card`, ...) and `check` statements."""

from __future__ import annotations

from .. import ast
from ..errors import DflError
from ..evaluate.set_functions import SET_FUNCTIONS
from .combine import Scope, describe, kind_of
from .info import BOOL, Info, Sign
from .symbols import SetSymbol, Symbol


class SetRules:
    """Mixed into `Checker`."""

    # ------------------------------------------------------------------ statements
    def _SetDecl(self, stmt: ast.SetDecl) -> None:
        scope, arity, _ = self._domain(stmt.index)  # `set S{I}`: its dummies, S[...]'s arity
        dim, integer = stmt.dimen, False  # a set of tuples says so (`within A * B`, `dimen 2`)
        if stmt.ordered_by is not None and stmt.index is not None:
            raise DflError("`ordered by` on an indexed set is not supported",
                           stmt.ordered_by.pos, hint="order the sets' data as you want them")
        for part in (stmt.within, stmt.value, stmt.default, stmt.ordered_by):
            if part is None:
                continue
            info = self.expr(part, scope)
            if info.kind != "set":
                raise DflError(f"expected a set here, got a {kind_of(info)}", part.pos)
            if not info.is_data:
                raise DflError("a set can't depend on variables or predicted params", part.pos)
            if dim is not None and info.set_dim is not None and dim != info.set_dim:
                raise DflError(
                    f"`{stmt.name}` holds {info.set_dim}-tuples but is "
                    f"{'within a set of' if part is stmt.within else 'declared with'} "
                    f"{dim}-tuples",
                    part.pos,
                )
            dim = info.set_dim if info.set_dim is not None else dim
            integer = integer or info.integer
        self.symbols[stmt.name] = SetSymbol(stmt.name, stmt, "set", dim=dim or 1,
                                            integer=integer, index=stmt.index, arity=arity)

    def _Check(self, stmt: ast.Check) -> None:
        scope = self.index(stmt.index, {}) if stmt.index is not None else {}
        info = self.expr(stmt.cond, scope)
        if info.kind != "bool":
            raise DflError(f"a check needs a condition, got {describe(info)}", stmt.cond.pos,
                           hint="write a comparison, e.g. `check{i in I}: a[i] >= 0;`")
        if not info.is_data:
            raise DflError("a check tests data, not variables or predicted params",
                           stmt.cond.pos)
        if not stmt.name.startswith("#"):
            self.symbols[stmt.name] = Symbol(stmt.name, stmt, "check")

    # ------------------------------------------------------------------ expressions
    def _e_SetOf(self, node: ast.SetOf, scope: Scope) -> Info:
        inner = self.index(node.index, scope)
        parts = node.body.items if isinstance(node.body, ast.Tuple) else (node.body,)
        integer = True
        for part in parts:
            info = self.expr(part, inner)
            if not info.is_data or info.kind not in ("num", "elem") or info.shape != ():
                raise DflError(f"`setof` collects elements, got {describe(info)}", part.pos)
            integer = integer and info.integer
        self.infos[id(node.body)] = Info(kind="elem")
        return Info(kind="set", set_dim=len(parts), integer=integer)

    def _e_Subset(self, node: ast.Subset, scope: Scope) -> Info:
        """`A within B` as a condition."""
        infos = [self.expr(side, scope) for side in (node.left, node.right)]
        for side, info in zip((node.left, node.right), infos, strict=True):
            if info.kind != "set" or not info.is_data:
                raise DflError(f"`within` compares two sets of data, got {describe(info)}",
                               side.pos)
        dims = [i.set_dim for i in infos]
        if None not in dims and dims[0] != dims[1]:
            raise DflError(f"`within` compares a set of {dims[0]}-tuples with one of "
                           f"{dims[1]}-tuples", node.pos)
        return BOOL

    def _e_Concat(self, node: ast.Concat, scope: Scope) -> Info:
        """MathProg's `a & b`: an element made of two texts."""
        for side in (node.left, node.right):
            info = self.expr(side, scope)
            if not info.is_data or info.kind not in ("num", "elem") or info.shape != ():
                raise DflError(f"`&` joins elements or numbers, got {describe(info)}", side.pos)
        return Info(kind="elem")

    def _e_SetLiteral(self, node: ast.SetLiteral, scope: Scope) -> Info:
        if node.elements and isinstance(node.elements[0], ast.Tuple):
            return self._tuple_literal(node, scope)  # `{(0, 1), (1, 0)}`
        if node.elements and self.expr(node.elements[0], scope).kind == "set":
            return self._set_product(node, scope)  # AMPL's `{ORIG, DEST}`
        for element in node.elements:
            info = self.expr(element, scope)
            if not info.is_data or info.kind not in ("num", "elem") or info.shape != ():
                raise DflError("a set literal lists elements (numbers or strings)", element.pos)
        integer = all(isinstance(e, ast.Number) and isinstance(e.value, int) for e in node.elements)
        return Info(kind="set", set_dim=1, integer=integer and bool(node.elements))

    def _tuple_literal(self, node: ast.SetLiteral, scope: Scope) -> Info:
        """`{(0, 1), (1, 0)}`: a set of tuples, each of one width."""
        width = len(node.elements[0].items)
        for element in node.elements:
            if not isinstance(element, ast.Tuple) or len(element.items) != width:
                raise DflError(f"a set literal of {width}-tuples lists {width}-tuples only",
                               element.pos)
            for part in element.items:
                info = self.expr(part, scope)
                if not info.is_data or info.kind not in ("num", "elem") or info.shape != ():
                    raise DflError(f"a tuple holds elements, not {describe(info)}", part.pos)
        integer = all(isinstance(p, ast.Number) and isinstance(p.value, int)
                      for e in node.elements for p in e.items)
        return Info(kind="set", set_dim=width, integer=integer)

    def _set_product(self, node: ast.SetLiteral, scope: Scope) -> Info:
        """AMPL's `{A, B}` of sets: the index's product, as `A cross B`."""
        infos = [self.expr(e, scope) for e in node.elements]
        for element, info in zip(node.elements, infos, strict=True):
            if info.kind != "set":
                raise DflError(f"`{{A, B}}` of sets is their product, but this is "
                               f"{describe(info)}", element.pos,
                               hint="a set literal lists elements, or sets (a product), "
                                    "not both")
        dims = [i.set_dim for i in infos]
        return Info(kind="set", set_dim=None if None in dims else sum(dims),
                    integer=all(i.integer for i in infos))

    def _e_Range(self, node: ast.Range, scope: Scope) -> Info:
        lo = self.expr(node.lo, scope)
        hi = self.expr(node.hi, scope)
        parts = [(node.lo, lo, "bound"), (node.hi, hi, "bound")]
        if node.step is not None:
            parts.append((node.step, self.expr(node.step, scope), "step"))
        for side, info, what in parts:
            if not info.is_data or info.kind not in ("num", "elem") or info.shape != ():
                raise DflError(f"a range's {what}s must be integer data", side.pos)
            if info.value is not None and not float(info.value).is_integer():
                raise DflError(f"a range's {what} must be an integer, got {info.value}", side.pos)
        if node.step is not None and parts[2][1].value == 0:
            raise DflError("a range's step must not be 0", node.step.pos)
        sign = lo.sign if node.step is None or parts[2][1].sign.nonneg else Sign.UNKNOWN
        return Info(kind="set", set_dim=1, integer=True, sign=sign)

    def _e_SetOp(self, node: ast.SetOp, scope: Scope) -> Info:
        left = self.expr(node.left, scope)
        right = self.expr(node.right, scope)
        for side, info in ((node.left, left), (node.right, right)):
            if info.kind != "set":
                raise DflError(f"`{node.op}` needs sets, got {describe(info)}", side.pos)
        if left.set_dim and right.set_dim and left.set_dim != right.set_dim:
            raise DflError(
                f"`{node.op}` of sets of {left.set_dim}-tuples and {right.set_dim}-tuples",
                node.pos,
            )
        integer = left.integer and (right.integer or node.op not in ("union", "symdiff"))
        return Info(kind="set", set_dim=left.set_dim or right.set_dim, integer=integer)

    def _e_Tuple(self, node: ast.Tuple, scope: Scope) -> Info:
        raise DflError("a tuple `(a, b)` can't be used here", node.pos,
                       hint="tuples are the body of `setof{...} (i, j)` and the left of "
                            "`(i, j) in SET`")

    def _family(self, node: ast.Subscript, symbol: SetSymbol, scope: Scope) -> Info:
        """`S[i]`: one member set of an indexed set."""
        if symbol.index is None:
            raise DflError(f"the set `{symbol.name}` is not indexed, so it can't be subscripted",
                           node.pos, hint=f"declare it `set {symbol.name}{{I}}` to have one "
                                          "set per element of I")
        if symbol.arity is not None and len(node.args) != symbol.arity:
            raise DflError(f"`{symbol.name}` takes {symbol.arity} subscript"
                           f"{'s' if symbol.arity != 1 else ''}, got {len(node.args)}",
                           node.pos, hint=f"declared on line {symbol.line}")
        for arg in node.args:
            info = self.expr(arg, scope)
            if not info.is_data or info.kind not in ("num", "elem") or info.shape != ():
                raise DflError(f"a subscript must be one element, got {describe(info)}",
                               arg.pos)
        self.infos[id(node.base)] = Info(kind="set", set_dim=symbol.dim)
        return Info(kind="set", set_dim=symbol.dim, integer=symbol.integer)

    def _set_function(self, node: ast.Call, scope: Scope) -> Info:
        """`card(S)`, `first(S)`, `next(e, S, k)`, ...: data, fixed once the sets are bound."""
        spec = SET_FUNCTIONS[node.func]
        if not spec.least <= len(node.args) <= spec.most:
            raise DflError(f"`{node.func}` takes {spec.signature}", node.pos)
        infos = [self.expr(a, scope) for a in node.args]
        for arg, info, want in zip(node.args, infos, spec.kinds, strict=False):
            if want == "set" and info.kind != "set":
                raise DflError(f"`{node.func}` needs a set here, got {describe(info)}", arg.pos,
                               hint=f"`{node.func}` takes {spec.signature}")
            if want != "set" and (info.kind not in ("num", "elem") or info.shape != ()):
                what = "element" if want == "elem" else "number"
                raise DflError(f"`{node.func}` needs one {what} here, got {describe(info)}",
                               arg.pos)
            if not info.is_data:
                raise DflError(f"`{node.func}` works on data, not variables", arg.pos)
            if want == "set" and info.set_dim not in (1, None) and node.func != "card":
                raise DflError(f"`{node.func}` needs a set of single elements, this one holds "
                               f"{info.set_dim}-tuples", arg.pos)
        if spec.kinds[0] == "elem" and len(node.args) == 1 and not spec.text:
            self._own_set(node)
        if spec.result == "elem":
            sets = [i for i, k in zip(infos, spec.kinds, strict=False) if k == "set"]
            integer = sets[0].integer if sets else infos[0].integer
            return Info(kind="elem", integer=integer)
        return Info(integer=True, sign=Sign.NONNEG)

    def _own_set(self, node: ast.Call) -> None:
        """`next(t)` with no set: the set `t` runs over, which only a dummy has."""
        arg = node.args[0]
        if not isinstance(arg, ast.Name) or self.info(arg).kind != "elem" or arg.id in self.symbols:
            raise DflError(f"`{node.func}` of an element needs its set: write "
                           f"`{node.func}(e, SET)`", node.pos)
