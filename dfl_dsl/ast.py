"""The abstract syntax tree of a `.opt` model: frozen dataclasses that carry source positions.

Every node knows where it came from (`pos`), so that any later stage (checker, binder, compiler)
can report an error at the exact line and column of the construct that caused it.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Pos:
    """A source span: 1-based line and column of the first and last character."""

    line: int = 0
    column: int = 0
    end_line: int = 0
    end_column: int = 0


NOWHERE = Pos()


@dataclass(frozen=True, eq=False)
class Node:
    pos: Pos = field(default=NOWHERE, kw_only=True, repr=False, compare=False)


# --------------------------------------------------------------------------- expressions
class Expr(Node):
    """Base of every expression node (values, conditions and sets share one grammar)."""


@dataclass(frozen=True, eq=False)
class Number(Expr):
    value: float | int


@dataclass(frozen=True, eq=False)
class String(Expr):
    value: str


@dataclass(frozen=True, eq=False)
class Name(Expr):
    id: str


@dataclass(frozen=True, eq=False)
class Subscript(Expr):
    """`base[args]`: indexing by dummies/elements, or slicing with a range."""

    base: Expr
    args: tuple[Expr, ...]


@dataclass(frozen=True, eq=False)
class Transpose(Expr):
    operand: Expr


@dataclass(frozen=True, eq=False)
class Call(Expr):
    """`func(args)`: an atom such as `sqrt`, `norm1`, `quad_form`, `cvar`, or whole-array `sum`."""

    func: str
    args: tuple[Expr, ...]


@dataclass(frozen=True, eq=False)
class BinOp(Expr):
    """Arithmetic `+ - * / @` (on sets, `*` is the cross product)."""

    op: str
    left: Expr
    right: Expr


@dataclass(frozen=True, eq=False)
class Neg(Expr):
    operand: Expr


@dataclass(frozen=True, eq=False)
class Power(Expr):
    base: Expr
    exponent: Expr


@dataclass(frozen=True, eq=False)
class Compare(Expr):
    """A comparison chain `a <= b <= c`: `ops[k]` sits between `operands[k]` and `operands[k+1]`."""

    ops: tuple[str, ...]
    operands: tuple[Expr, ...]
    written: tuple[str, ...] = ()  # the ops as written where AMPL's `=`/`<>` stand for them

    def spelled(self, k: int) -> str:
        """Op k as the user wrote it (for messages)."""
        return self.written[k] if self.written else self.ops[k]


@dataclass(frozen=True, eq=False)
class BoolOp(Expr):
    op: str  # "and" | "or"
    left: Expr
    right: Expr


@dataclass(frozen=True, eq=False)
class Not(Expr):
    operand: Expr


@dataclass(frozen=True, eq=False)
class Member(Expr):
    """`element in SET`."""

    element: Expr
    set: Expr


@dataclass(frozen=True, eq=False)
class Subset(Expr):
    """`A within B` as a condition: every member of A is in B."""

    left: Expr
    right: Expr


@dataclass(frozen=True, eq=False)
class Concat(Expr):
    """MathProg's `a & b`: the element whose text is a's then b's (a number as `%.15g`)."""

    left: Expr
    right: Expr


@dataclass(frozen=True, eq=False)
class IfThenElse(Expr):
    cond: Expr
    then: Expr
    orelse: Expr


@dataclass(frozen=True, eq=False)
class Reduce(Expr):
    """`sum{INDEX} body`, `max{INDEX} body`, `min{INDEX} body`."""

    op: str
    index: SetIndex
    body: Expr


@dataclass(frozen=True, eq=False)
class Range(Expr):
    """`lo .. hi`: an inclusive integer set (or a slice when used as a subscript); AMPL's
    `lo .. hi by step` takes every step-th integer from lo."""

    lo: Expr
    hi: Expr
    step: Expr | None = None


@dataclass(frozen=True, eq=False)
class SetLiteral(Expr):
    elements: tuple[Expr, ...]


@dataclass(frozen=True, eq=False)
class SetOp(Expr):
    op: str  # "union" | "diff" | "symdiff" | "inter"
    left: Expr
    right: Expr


@dataclass(frozen=True, eq=False)
class Tuple(Expr):
    """`(a, b)`: a tuple of elements (the body of `setof`, the left of `in`)."""

    items: tuple[Expr, ...]


@dataclass(frozen=True, eq=False)
class SetOf(Expr):
    """AMPL's `setof{INDEX} body`: the set of the body's values (elements or tuples), in the
    index's order, each once."""

    index: SetIndex
    body: Expr


# --------------------------------------------------------------------------- indexing
@dataclass(frozen=True, eq=False)
class IndexItem(Node):
    """`i in S`, `(i, j) in ARCS`, or a bare `S` (no dummies).

    A tuple pattern keeps its components as written in `parts`: a component that is not a
    fresh name (an outer dummy, an element param, a literal, an expression) matches instead of
    binding. `names` holds each component's name (`""` for a component that is no name)."""

    names: tuple[str, ...]
    set: Expr
    parts: tuple[Expr, ...] = ()


@dataclass(frozen=True, eq=False)
class SetIndex(Node):
    """AMPL-style `{i in S, (j, k) in ARCS : FILTER}`."""

    items: tuple[IndexItem, ...]
    filter: Expr | None = None

    @property
    def dummies(self) -> tuple[str, ...]:
        return tuple(name for item in self.items for name in item.names if name)


@dataclass(frozen=True, eq=False)
class ShapeIndex(Node):
    """numpy-style `[n, m]`: axes `0..n-1`, `0..m-1`."""

    dims: tuple[Expr, ...]


Index = SetIndex | ShapeIndex


# --------------------------------------------------------------------------- statements
class Statement(Node):
    name: str


@dataclass(frozen=True, eq=False)
class ModelDecl(Statement):
    name: str


@dataclass(frozen=True, eq=False)
class SetDecl(Statement):
    name: str
    value: Expr | None = None
    within: Expr | None = None
    index: SetIndex | None = None  # `set S{I}`: one set per element of I
    order: str = ""  # "" | "ordered" | "circular" (next/prev wrap around)
    dimen: int | None = None  # AMPL's `dimen n`: the width of its tuples
    default: Expr | None = None  # the set (or each set of `S{I}`) the data leaves out
    ordered_by: Expr | None = None  # AMPL's `ordered by A`: a subset of A, in A's order


@dataclass(frozen=True, eq=False)
class ParamCheck(Node):
    """A declared check on a param's values: `>= e`, `<= e`, `> e`, `< e`, `psd`, `symmetric`,
    or `in SET` (the param holds elements of SET)."""

    op: str
    operand: Expr | None = None


@dataclass(frozen=True, eq=False)
class ParamDecl(Statement):
    name: str
    index: Index | None = None
    kinds: tuple[str, ...] = ()  # "int", "binary", "symbolic", "predicted", "uncertain"
    checks: tuple[ParamCheck, ...] = ()
    value: Expr | None = None
    default: Expr | None = None

    @property
    def is_predicted(self) -> bool:
        return "predicted" in self.kinds

    @property
    def is_uncertain(self) -> bool:
        return "uncertain" in self.kinds

    @property
    def is_element(self) -> bool:
        """Holds set elements (`in SET` or `symbolic`), not numbers."""
        return "symbolic" in self.kinds or self.element_set is not None

    @property
    def element_set(self) -> Expr | None:
        for check in self.checks:
            if check.op == "in":
                return check.operand
        return None


@dataclass(frozen=True, eq=False)
class VarAttr(Node):
    """A variable attribute: domain `binary`/`integer`/`stiefel`, a box `in [lo, hi]`,
    a bound `>= e` / `<= e`, or AMPL's initial value `:= e`."""

    kind: str  # "binary" | "integer" | "stiefel" | "box" | ">=" | "<=" | "init"
    operands: tuple[Expr, ...] = ()


@dataclass(frozen=True, eq=False)
class VarDecl(Statement):
    name: str
    index: Index | None = None
    attrs: tuple[VarAttr, ...] = ()

    @property
    def domain(self) -> str:
        """`continuous`, `binary`, `integer` or `stiefel`."""
        for attr in self.attrs:
            if attr.kind in ("binary", "integer", "stiefel"):
                return attr.kind
        return "continuous"


@dataclass(frozen=True, eq=False)
class ExprDecl(Statement):
    name: str
    index: Index | None
    body: Expr


@dataclass(frozen=True, eq=False)
class Objective(Statement):
    sense: str  # "minimize" | "maximize"
    name: str
    body: Expr
    index: SetIndex | None = None  # AMPL's indexed objective: one member is solved


@dataclass(frozen=True, eq=False)
class Constraint(Statement):
    name: str
    index: Index | None
    body: Expr


@dataclass(frozen=True, eq=False)
class Check(Statement):
    """AMPL's `check [NAME] [{INDEX}]: condition;`: tested on the data at bind time. A check
    without a name is called by its line (`check on line 7`)."""

    name: str
    index: SetIndex | None
    cond: Expr

    @property
    def title(self) -> str:
        return f"check `{self.name}`" if not self.name.startswith("#") else \
            f"the check on line {self.pos.line}"


@dataclass(frozen=True, eq=False)
class Model(Node):
    statements: tuple[Statement, ...]
    source: str = ""
    filename: str = "<string>"


def walk(node: Node):
    """Yield `node` and every node below it, depth first (statement order kept)."""
    yield node
    for value in node.__dict__.values():
        if isinstance(value, Node):
            yield from walk(value)
        elif isinstance(value, tuple):
            for item in value:
                if isinstance(item, Node):
                    yield from walk(item)
