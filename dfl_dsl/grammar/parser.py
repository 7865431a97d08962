"""Text -> AST: the lark LALR parser (strict: no conflicts) and a Transformer into `dfl_dsl.ast`.
Syntax errors become `DflError`s located at the mistake (grammar/syntax_errors.py)."""

from __future__ import annotations

from functools import cache
from importlib import resources
from operator import itemgetter

from lark import Lark, Token, Tree
from lark.exceptions import UnexpectedInput
from lark.grammar import NonTerminal

from .. import ast
from ..errors import DflError
from .ampl_words import AmplWords
from .branches import comparison_out_of_if
from .columns import Clause, ColumnVar, NodeDecl, lower_columns
from .depth import check_depth
from .disjunctions import lower_disjunctions
from .piecewise import Indexed, piecewise
from .syntax_errors import syntax_error

LARK_OPTIONS = dict(
    parser="lalr",
    lexer="basic",  # keywords always lex as keywords, so `param set;` is refused
    postlex=AmplWords(),
    strict=True,
    propagate_positions=True,
    maybe_placeholders=True,
    cache=True,  # the compiled LALR tables are kept in the temp dir: startup ~10x faster
)


def grammar_text() -> str:
    return resources.files(__package__).joinpath("opt.lark").read_text()


@cache
def _lark() -> Lark:
    parser = Lark(grammar_text(), **LARK_OPTIONS)
    _pass_unit_rules_through(parser.parser.parser.parser.callbacks)
    return parser


def _pass_unit_rules_through(callbacks: dict) -> None:
    """Give every unit reduction of an inlined rule (`?power: postfix`) a callback that hands
    its one child on untouched.

    Each operand climbs the whole precedence ladder (atom → postfix → … → expr, 14 rules), and
    lark's own callback for such a step filters the children, finds that one is left, returns
    it, and then re-reads the child's positions — three quarters of the parse's reductions and
    a third of its time. The child is a finished tree or token whose positions are already
    set, so returning it is exactly what lark does, minus the bookkeeping."""
    for rule in callbacks:
        if (rule.options.expand1 and rule.alias is None and len(rule.expansion) == 1
                and isinstance(rule.expansion[0], NonTerminal)):
            callbacks[rule] = itemgetter(0)


# AMPL's spellings of a comparison, kept as the one the rest of the code knows
_SAME_OP = {"=": "==", "<>": "!="}
_ATTR_WORDS = {"value": "=", "within": "within", "order": "ordered", "dimen": "dimen",
               "default": "default", "ordered_by": "ordered by"}


def _pos(meta_or_token) -> ast.Pos:
    return ast.Pos(
        getattr(meta_or_token, "line", 0) or 0,
        getattr(meta_or_token, "column", 0) or 0,
        getattr(meta_or_token, "end_line", 0) or 0,
        getattr(meta_or_token, "end_column", 0) or 0,
    )


def _number(token) -> int | float:
    """A literal's value: an int where int64 holds it (as numpy would), else a float; one
    that overflows a float is an error (`1e999` silently read as `inf` hid typos)."""
    text = str(token)
    if not any(c in text for c in ".eE") and len(text) < 19:  # (2^63 has 19 digits)
        return int(text)
    value = float(text) if any(c in text for c in ".eE") else _big_int(text)
    if value != value or value in (float("inf"), float("-inf")):
        raise DflError(f"the number {_shortened(text)} is too large for a float (the largest "
                       "is about 1.8e308)", _pos(token), hint="write `inf` for infinity")
    return value


def _big_int(text: str) -> int | float:
    value = int(text)
    if value < 1 << 63:
        return value
    return float(value) if len(text) <= 309 else float("inf")  # (float() raises past that)


def _shortened(text: str) -> str:
    return text if len(text) <= 24 else f"{text[:10]}...{text[-6:]} ({len(text)} digits)"


class _ToAst:
    """Parse tree -> frozen AST dataclasses, each with its source position. One method per
    grammar rule, called with the rule's meta (positions) and its already-built children."""

    def transform(self, tree: Tree):
        """Bottom-up over the subtrees, without recursion (a deeply nested model must reach
        the nesting check, not a RecursionError) and without lark's per-call wrappers."""
        built: dict[int, object] = {}
        for sub in tree.iter_subtrees():  # children before their parents
            children = [built[id(c)] if isinstance(c, Tree) else c for c in sub.children
                        if not (isinstance(c, Tree) and c.data == "alias")]
            method = getattr(self, sub.data, None)
            built[id(sub)] = (method(sub.meta, children) if method is not None
                              else Tree(sub.data, children, sub.meta))
        return built[id(tree)]

    # ------------------------------------------------------------ statements
    def start(self, meta, children):
        return list(children)

    def model_decl(self, meta, c):
        return ast.ModelDecl(str(c[0]), pos=_pos(c[0]))

    def set_value(self, meta, c):
        return ("value", c[1])

    def set_within(self, meta, c):
        return ("within", c[1])

    def set_default(self, meta, c):
        return ("default", c[1])

    def set_ordered_by(self, meta, c):
        return ("ordered_by", c[2])

    def set_ordered(self, meta, c):
        return ("order", str(c[0]))

    def set_dimen(self, meta, c):
        width = _number(c[1])
        if not isinstance(width, int) or width < 1:
            raise DflError("`dimen` takes a whole number >= 1", _pos(c[1]))
        return ("dimen", width)

    def set_decl(self, meta, c):
        attrs: dict[str, object] = {}
        for key, value in (x for x in c[2:] if x is not None):
            if key in attrs:
                raise DflError(f"set `{c[0]}` repeats `{_ATTR_WORDS[key]}`", _pos(c[0]))
            attrs[key] = value
        if "value" in attrs and "default" in attrs:
            raise DflError(f"set `{c[0]}` is computed (`=`), so a `default` has nothing to fill",
                           _pos(c[0]))
        return ast.SetDecl(str(c[0]), attrs.get("value"), attrs.get("within"), index=c[1],
                           order=attrs.get("order", ""), dimen=attrs.get("dimen"),
                           default=attrs.get("default"), ordered_by=attrs.get("ordered_by"),
                           pos=_pos(c[0]))

    def kind(self, meta, c):
        word = str(c[0])
        return "int" if word == "integer" else word  # AMPL's spelling of the `int` kind

    def param_check(self, meta, c):
        op = {"<>": "!=", "within": "in"}.get(str(c[0]), str(c[0]))
        operand = c[1] if len(c) > 1 else None
        return ast.ParamCheck(op, operand, pos=_pos(meta))

    def param_value(self, meta, c):
        kind = "value" if str(c[0]) == "=" else "default"  # (`:=`: the data may replace it)
        return (kind, c[1], _pos(c[0]))

    def param_attrs(self, meta, c):
        return [x for part in c for x in (part if isinstance(part, list) else [part])]

    def param_decl(self, meta, c):
        name, index, attrs = c[0], c[1], c[2] or []
        kinds: list[str] = []
        checks = []
        values: dict[str, ast.Expr] = {}
        for item in attrs:
            if isinstance(item, ast.ParamCheck):
                checks.append(item)
            elif isinstance(item, str):
                kinds.append(item)
            elif item[0] in values or (item[0] == "value" and "default" in values) or (
                    item[0] == "default" and "value" in values):
                raise DflError(f"param `{name}` has a value (`=`) or a `default` twice",
                               item[2], hint="give either `= e` or `default e`, once")
            else:
                values[item[0]] = item[1]
        return ast.ParamDecl(str(name), index, tuple(kinds), tuple(checks),
                             values.get("value"), values.get("default"), pos=_pos(name))

    def param_decl_kind(self, meta, c):
        """`param p : int ...;` (the `:` kinds of this language, before AMPL's attributes)."""
        return self.param_decl(meta, [c[0], c[1], [c[2], *(c[3] or [])]])

    def var_binary(self, meta, c):
        return ast.VarAttr("binary", pos=_pos(meta))

    def var_integer(self, meta, c):
        return ast.VarAttr("integer", pos=_pos(meta))

    def var_stiefel(self, meta, c):
        return ast.VarAttr("stiefel", pos=_pos(meta))

    def var_box(self, meta, c):
        return ast.VarAttr("box", (c[1], c[2]), pos=_pos(meta))

    def var_lower(self, meta, c):
        return ast.VarAttr(">=", (c[1],), pos=_pos(meta))

    def var_upper(self, meta, c):
        return ast.VarAttr("<=", (c[1],), pos=_pos(meta))

    def var_init(self, meta, c):
        return ast.VarAttr("init", (c[1],), pos=_pos(meta))

    def var_decl(self, meta, c, arc: bool = False):
        attrs = tuple(a for a in c[2:] if a is not None and not isinstance(a, Clause))
        starts = [a for a in attrs if a.kind == "init"]
        if len(starts) > 1:
            raise DflError(f"variable `{c[0]}` has two initial values (`:=`)", starts[1].pos)
        decl = ast.VarDecl(str(c[0]), c[1], attrs, pos=_pos(c[0]))
        clauses = tuple(a for a in c[2:] if isinstance(a, Clause))
        return ColumnVar(decl, clauses, arc) if clauses or arc else decl

    def arc_decl(self, meta, c):
        """AMPL's `arc X {...} >= 0, from N[i], to N[j], obj Cost c;`: a variable."""
        return self.var_decl(meta, c[1:], arc=True)

    def node_decl(self, meta, c):
        """AMPL's `node N {k in K}: net_in = d[k];` (no body: `net_in = 0`)."""
        return NodeDecl(ast.Constraint(str(c[1]), c[2], c[3], pos=_pos(c[1])))

    def var_column(self, meta, c):
        """`obj Cost c`, `coeff {i in S} Row[i] a`, `cover Row[i]`, `from N[i] [a]`."""
        word, index, (row, args) = str(c[0]), c[1], c[2]
        coef = c[3] if len(c) > 3 else None
        return Clause(word, index, row, args, coef, _pos(meta))

    def column_row(self, meta, c):
        return str(c[0]), tuple(c[1]) if c[1] is not None else ()

    def expr_decl(self, meta, c):
        return ast.ExprDecl(str(c[0]), c[1], c[3], pos=_pos(c[0]))

    def sense(self, meta, c):
        return str(c[0])

    def objective(self, meta, c):
        return ast.Objective(c[0], str(c[1]), c[3], c[2], pos=_pos(c[1]))

    def check_stmt(self, meta, c):
        name = str(c[1]) if c[1] is not None else f"#check:{c[0].line}:{c[0].column}"
        return ast.Check(name, c[2], c[3], pos=_pos(c[1] if c[1] is not None else c[0]))

    def constraint(self, meta, c):
        """`subject to NAME ...`, `s.t. NAME ...` or AMPL's bare `NAME {I}: ...`."""
        while c[0] is None or (isinstance(c[0], Token) and c[0].type in ("ST", "TO")):
            c = c[1:]
        return ast.Constraint(str(c[0]), c[1], comparison_out_of_if(c[2]), pos=_pos(c[0]))

    # ------------------------------------------------------------ indexing
    def set_index(self, meta, c):
        items = tuple(x for x in c if isinstance(x, ast.IndexItem))
        rest = [x for x in c if not isinstance(x, ast.IndexItem)]
        return ast.SetIndex(items, rest[0] if rest else None, pos=_pos(meta))

    def bind_in(self, meta, c):
        """`i in S` or `(i, j) in S`. A tuple's components may be any expression: one that
        is no new name matches (the checker tells which); a single `i in S` binds a name."""
        left = c[0]
        if isinstance(left, ast.Tuple):
            parts = left.items
            names = tuple(p.id if isinstance(p, ast.Name) else "" for p in parts)
            return ast.IndexItem(names, c[2], parts, pos=_pos(meta))
        if not isinstance(left, ast.Name):
            raise DflError("an index binds names here: `i in S` or `(i, j) in S`",
                           left.pos, hint="to test a condition, put it after `:`")
        return ast.IndexItem((left.id,), c[2], pos=_pos(meta))

    def bind_none(self, meta, c):
        return ast.IndexItem((), c[0], pos=_pos(meta))

    def shape_index(self, meta, c):
        return ast.ShapeIndex(tuple(c), pos=_pos(meta))

    # ------------------------------------------------------------ expressions
    def if_expr(self, meta, c):
        return ast.IfThenElse(c[0], c[1], c[2], pos=_pos(meta))

    def if_then(self, meta, c):
        """AMPL's `if c then e`: `else 0`, the zero placed at the end of `e`."""
        end = c[1].pos
        zero = ast.Number(0, pos=ast.Pos(end.end_line, end.end_column, end.end_line,
                                         end.end_column))
        return ast.IfThenElse(c[0], c[1], zero, pos=_pos(meta))

    def or_(self, meta, c):
        return ast.BoolOp("or", c[0], c[1], pos=_pos(meta))

    def quantifier_expr(self, meta, c):
        """AMPL's `exists{I} c` (c holds somewhere in I) and `forall{I} c` (everywhere), as a
        count of the index's members where c holds (or fails): `sum{I} (if c then 1) > 0`."""
        pos = _pos(meta)
        word, index, cond = c[1], c[2], c[3]
        hit, miss = (ast.Number(1, pos=pos), ast.Number(0, pos=pos))
        if word == "forall":
            hit, miss = miss, hit
        count = ast.Reduce("sum", index, ast.IfThenElse(cond, hit, miss, pos=pos), pos=pos)
        test = ast.Compare((">" if word == "exists" else "==",), (count, ast.Number(0, pos=pos)),
                           pos=pos)
        return test if c[0] is None else ast.Not(test, pos=pos)

    def and_(self, meta, c):
        return ast.BoolOp("and", c[0], c[1], pos=_pos(meta))

    def not_(self, meta, c):
        return ast.Not(c[1], pos=_pos(meta))

    def not_bang(self, meta, c):
        return ast.Not(c[0], pos=_pos(meta))  # MathProg's `!c`

    def comp_op(self, meta, c):
        return str(c[0])

    def compare(self, meta, c):
        written = tuple(c[1::2])
        ops = tuple(_SAME_OP.get(op, op) for op in written)
        return ast.Compare(ops, tuple(c[0::2]), written if written != ops else (), pos=_pos(meta))

    def member(self, meta, c):
        return ast.Member(c[0], c[2], pos=_pos(meta))

    def not_member(self, meta, c):
        """AMPL's `e not in S`."""
        return ast.Not(ast.Member(c[0], c[3], pos=_pos(meta)), pos=_pos(meta))

    def subset(self, meta, c):
        return ast.Subset(c[0], c[2], pos=_pos(meta))

    def concat(self, meta, c):
        return ast.Concat(c[0], c[1], pos=_pos(meta))

    def set_op(self, meta, c):
        return ast.SetOp(str(c[1]), c[0], c[2], pos=_pos(meta))

    def cross(self, meta, c):
        """AMPL's `A cross B`: the product of sets, as `A * B` (the checker tells a `cross` of
        numbers apart, to point at `*`)."""
        return ast.BinOp("cross", c[0], c[2], pos=_pos(meta))

    def tuple(self, meta, c):
        return ast.Tuple(tuple(c), pos=_pos(meta))

    def range(self, meta, c):
        return ast.Range(c[0], c[1], c[3], pos=_pos(meta))

    def mulop(self, meta, c):
        return str(c[0])

    def binop(self, meta, c):
        return ast.BinOp(str(c[1]), c[0], c[2], pos=_pos(meta))

    def binop_neg(self, meta, c):
        """`a * -sum{...} b`: the reduction is negated, then multiplied."""
        minus, reduction = c[2], c[3]
        end = reduction.pos
        pos = ast.Pos(minus.line, minus.column, end.end_line, end.end_column)
        neg = ast.Neg(reduction, pos=pos)
        return ast.BinOp(str(c[1]), c[0], neg, pos=_pos(meta))

    def neg(self, meta, c):
        operand = c[1]
        if isinstance(operand, ast.Number):  # fold `-3` into a literal
            return ast.Number(-operand.value, pos=_pos(meta))
        return ast.Neg(operand, pos=_pos(meta))

    def power(self, meta, c):
        return ast.Power(c[0], c[2], pos=_pos(meta))  # (c[1]: `^` or AMPL's `**`)

    def subscript(self, meta, c):
        return ast.Subscript(c[0], tuple(c[1]), pos=_pos(meta))

    def transpose(self, meta, c):
        return ast.Transpose(c[0], pos=_pos(meta))

    def number(self, meta, c):
        return ast.Number(_number(c[0]), pos=_pos(c[0]))

    def string(self, meta, c):
        text = str(c[0])
        return ast.String(text[1:-1].replace(text[0] * 2, text[0]), pos=_pos(c[0]))

    def inf(self, meta, c):
        return ast.Number(float("inf"), pos=_pos(c[0]))

    def name(self, meta, c):
        return ast.Name(str(c[0]), pos=_pos(c[0]))

    def reducer(self, meta, c):
        return str(c[0])

    quantifier = reducer

    def call(self, meta, c):
        func = c[0]
        args = tuple(c[1]) if c[1] is not None else ()
        return ast.Call(str(func), args, pos=_pos(meta))

    def plus(self, meta, c):
        return c[1]

    def less(self, meta, c):
        """AMPL's `a less b`: a - b where that is positive, else 0."""
        pos = _pos(meta)
        return ast.Call("pos", (ast.BinOp("-", c[0], c[2], pos=pos),), pos=pos)

    def pw_list(self, meta, c):
        return list(c)

    def pw_indexed(self, meta, c):
        """`{p in 1..n} b[p]` in a piecewise-linear term's list."""
        built = self.set_literal(meta, c[:2])
        if not isinstance(built, ast.SetOf):
            raise DflError("an indexed list binds a dummy: `{p in 1..n} b[p]`", _pos(meta))
        return Indexed(built.index, c[2])

    def piecewise(self, meta, c):
        return piecewise(c[1], c[2], c[4], _pos(meta))

    def call_set(self, meta, c):
        """AMPL's `card {i in I: c}` (`card {I}`: the set I): a function of one set."""
        index = c[1]
        if index.filter is None and len(index.items) == 1 and not index.items[0].names:
            return ast.Call(str(c[0]), (index.items[0].set,), pos=_pos(meta))
        return ast.Call(str(c[0]), (_set_of(index, index.pos),), pos=_pos(meta))

    def reduction(self, meta, c):
        if c[0] == "setof":
            return ast.SetOf(c[1], c[2], pos=_pos(meta))
        return ast.Reduce(c[0], c[1], c[2], pos=_pos(meta))

    def set_literal(self, meta, c):
        """`{1, "a"}` lists elements; AMPL's `{i in I : cond}`, `{(i, j) in A, t in T}` builds
        a set from an index (as `setof{...}` of its dummies)."""
        items = tuple(c[0]) if c[0] is not None else ()
        if c[1] is None and not any(isinstance(x, ast.Member) for x in items):
            return ast.SetLiteral(items, pos=_pos(meta))
        for item in items:
            if not isinstance(item, ast.Member):
                raise DflError("a set built from an index binds every item: `{i in I, j in J "
                               ": cond}`", item.pos, hint="a set literal lists elements only")
        index = ast.SetIndex(tuple(self.bind_in(x.pos, [x.element, None, x.set])
                                   for x in items), c[1], pos=_pos(meta))
        return _set_of(index, _pos(meta))

    def args(self, meta, c):
        return list(c)


def _set_of(index: ast.SetIndex, pos: ast.Pos) -> ast.SetOf:
    """The set an index builds: `setof` of its dummies (a tuple of them where several)."""
    names = [ast.Name(n, pos=item.pos) for item in index.items for n in item.names]
    body = names[0] if len(names) == 1 else ast.Tuple(tuple(names), pos=pos)
    return ast.SetOf(index, body, pos=pos)


def parse(text: str, filename: str = "<string>") -> ast.Model:
    """Parse `.opt` source text into an `ast.Model` (raises `DflError` on a syntax error)."""
    text = text.removeprefix("\ufeff")  # the byte-order mark some Windows editors write
    try:
        tree = _lark().parse(text)
    except UnexpectedInput as exc:
        raise syntax_error(exc, text, _lark()).located(filename, text) from None
    try:
        statements = lower_disjunctions(lower_columns(_ToAst().transform(tree)))
        check_depth(statements)
    except DflError as exc:
        raise exc.located(filename, text) from None
    return ast.Model(tuple(statements), source=text, filename=filename)


