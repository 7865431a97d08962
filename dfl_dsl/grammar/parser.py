"""Text -> AST: the lark LALR parser (strict: no conflicts) and a Transformer into `dfl_dsl.ast`.

Syntax errors are turned into `DflError`s that point at the line where the mistake is: a missing
`;` is reported after the last token of the unfinished statement, an unclosed bracket at the
bracket that was opened, a reserved word used as a name at that word.
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from operator import itemgetter

from lark import Lark, Token, Tree
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken
from lark.grammar import NonTerminal

from .. import ast
from ..errors import DflError, did_you_mean
from .depth import check_depth

KEYWORDS = frozenset(
    "set param var minimize maximize subject to expr model in within binary integer int "
    "predicted uncertain psd default sum if then else and or not stiefel max min union diff "
    "inter inf symmetric".split()
)
_OPENERS = {"(": ")", "[": "]", "{": "}"}
_CLOSERS = {v: k for k, v in _OPENERS.items()}
# Statements start with these; none of them can continue an expression.
_STATEMENT_STARTS = frozenset(
    "SET PARAM VAR EXPR MODEL MINIMIZE MAXIMIZE SUBJECT ST".split()
)
# Tokens an expression can end with (for the "missing operator" hint).
_OPERAND_ENDS = frozenset("NAME NUMBER STRING INF RPAR RSQB RBRACE TRANSPOSE".split())
_OPERAND_STARTS = frozenset("NAME NUMBER STRING INF LPAR".split())


LARK_OPTIONS = dict(
    parser="lalr",
    lexer="basic",  # keywords always lex as keywords, so `param set;` is refused
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
            children = [built[id(c)] if isinstance(c, Tree) else c for c in sub.children]
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
        return ("value", c[0])

    def set_within(self, meta, c):
        return ("within", c[0])

    def set_decl(self, meta, c):
        attrs = dict(x for x in c[1:] if x is not None)
        return ast.SetDecl(str(c[0]), attrs.get("value"), attrs.get("within"), pos=_pos(c[0]))

    def kind(self, meta, c):
        return str(c[0])

    def kinds(self, meta, c):
        return ("kinds", tuple(c))

    def param_check(self, meta, c):
        op = str(c[0])
        operand = c[1] if len(c) > 1 else None
        return ast.ParamCheck(op, operand, pos=_pos(meta))

    def param_value(self, meta, c):
        return ("default" if str(c[0]) == "default" else "value", c[1])

    def param_decl(self, meta, c):
        name, index, rest = c[0], c[1], c[2:]
        kinds: tuple[str, ...] = ()
        checks = []
        value = default = None
        for item in rest:
            if item is None:
                continue
            if isinstance(item, ast.ParamCheck):
                checks.append(item)
            elif item[0] == "kinds":
                kinds = item[1]
            elif item[0] == "value":
                value = item[1]
            else:
                default = item[1]
        return ast.ParamDecl(
            str(name), index, kinds, tuple(checks), value, default, pos=_pos(name)
        )

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

    def var_decl(self, meta, c):
        return ast.VarDecl(str(c[0]), c[1], tuple(c[2:]), pos=_pos(c[0]))

    def expr_decl(self, meta, c):
        return ast.ExprDecl(str(c[0]), c[1], c[3], pos=_pos(c[0]))

    def sense(self, meta, c):
        return str(c[0])

    def objective(self, meta, c):
        return ast.Objective(c[0], str(c[1]), c[2], pos=_pos(c[1]))

    def constraint(self, meta, c):
        if isinstance(c[0], Token) and c[0].type == "ST":
            c = c[1:]
        return ast.Constraint(str(c[0]), c[1], c[2], pos=_pos(c[0]))

    # ------------------------------------------------------------ indexing
    def set_index(self, meta, c):
        items = tuple(x for x in c if isinstance(x, ast.IndexItem))
        rest = [x for x in c if not isinstance(x, ast.IndexItem)]
        return ast.SetIndex(items, rest[0] if rest else None, pos=_pos(meta))

    def bind_one(self, meta, c):
        return ast.IndexItem((str(c[0]),), c[2], pos=_pos(meta))

    def bind_tuple(self, meta, c):
        names = tuple(str(x) for x in c[:-2])
        return ast.IndexItem(names, c[-1], pos=_pos(meta))

    def bind_none(self, meta, c):
        return ast.IndexItem((), c[0], pos=_pos(meta))

    def shape_index(self, meta, c):
        return ast.ShapeIndex(tuple(c), pos=_pos(meta))

    # ------------------------------------------------------------ expressions
    def if_expr(self, meta, c):
        return ast.IfThenElse(c[0], c[1], c[2], pos=_pos(meta))

    def or_(self, meta, c):
        return ast.BoolOp("or", c[0], c[1], pos=_pos(meta))

    def and_(self, meta, c):
        return ast.BoolOp("and", c[0], c[1], pos=_pos(meta))

    def not_(self, meta, c):
        return ast.Not(c[0], pos=_pos(meta))

    def comp_op(self, meta, c):
        return str(c[0])

    def compare(self, meta, c):
        return ast.Compare(tuple(c[1::2]), tuple(c[0::2]), pos=_pos(meta))

    def member(self, meta, c):
        return ast.Member(c[0], c[2], pos=_pos(meta))

    def set_op(self, meta, c):
        return ast.SetOp(str(c[1]), c[0], c[2], pos=_pos(meta))

    def range(self, meta, c):
        return ast.Range(c[0], c[1], pos=_pos(meta))

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
        return ast.Power(c[0], c[1], pos=_pos(meta))

    def subscript(self, meta, c):
        return ast.Subscript(c[0], tuple(c[1]), pos=_pos(meta))

    def transpose(self, meta, c):
        return ast.Transpose(c[0], pos=_pos(meta))

    def number(self, meta, c):
        return ast.Number(_number(c[0]), pos=_pos(c[0]))

    def string(self, meta, c):
        return ast.String(str(c[0])[1:-1], pos=_pos(c[0]))

    def inf(self, meta, c):
        return ast.Number(float("inf"), pos=_pos(c[0]))

    def name(self, meta, c):
        return ast.Name(str(c[0]), pos=_pos(c[0]))

    def reducer(self, meta, c):
        return str(c[0])

    def call(self, meta, c):
        func = c[0]
        args = tuple(c[1]) if c[1] is not None else ()
        return ast.Call(str(func), args, pos=_pos(meta))

    def reduction(self, meta, c):
        return ast.Reduce(c[0], c[1], c[2], pos=_pos(meta))

    def set_literal(self, meta, c):
        return ast.SetLiteral(tuple(c[0]) if c[0] is not None else (), pos=_pos(meta))

    def args(self, meta, c):
        return list(c)


def parse(text: str, filename: str = "<string>") -> ast.Model:
    """Parse `.opt` source text into an `ast.Model` (raises `DflError` on a syntax error)."""
    text = text.removeprefix("\ufeff")  # the byte-order mark some Windows editors write
    try:
        tree = _lark().parse(text)
    except UnexpectedInput as exc:
        raise _syntax_error(exc, text).located(filename, text) from None
    try:
        statements = _ToAst().transform(tree)
        check_depth(statements)
    except DflError as exc:
        raise exc.located(filename, text) from None
    return ast.Model(tuple(statements), source=text, filename=filename)


# ---------------------------------------------------------------- friendly syntax errors
def _describe_terminal(name: str) -> str:
    friendly = {
        "NAME": "a name",
        "NUMBER": "a number",
        "STRING": "a string",
        "$END": "the end of the file",
        "TRANSPOSE": "`.T`",
    }
    if name in friendly:
        return friendly[name]
    try:
        pattern = _lark().get_terminal(name).pattern
    except KeyError:
        return name
    return f"`{pattern.value}`" if pattern.type == "str" else name.lower()


def _tokens_before(text: str, line: int, column: int) -> list[Token]:
    """The tokens of `text` that start before (line, column); stops at a lexing error."""
    tokens: list[Token] = []
    try:
        for token in _lark().lex(text, dont_ignore=False):
            if (token.line, token.column) >= (line, column):
                break
            tokens.append(token)
    except UnexpectedInput:
        pass
    return tokens


def _bracket_error(text: str) -> DflError | None:
    """An unclosed or mismatched bracket, reported where it was opened (or stray-closed)."""
    stack: list[tuple[str, ast.Pos]] = []
    line, column = 1, 1
    in_comment = False
    string_start: ast.Pos | None = None
    for ch in text:
        here = ast.Pos(line, column, line, column + 1)
        if ch == "\n":
            if string_start is not None:
                return DflError(
                    "unterminated string", string_start, hint='close it with `"` on the same line'
                )
            line, column = line + 1, 1
            in_comment = False
            continue
        column += 1
        if in_comment:
            continue
        if string_start is not None:
            if ch == '"':
                string_start = None
            continue
        if ch == "#":
            in_comment = True
        elif ch == '"':
            string_start = here
        elif ch in _OPENERS:
            stack.append((ch, here))
        elif ch in _CLOSERS:
            if not stack:
                return DflError(f"`{ch}` closes nothing", here, hint="remove it")
            opener, opened = stack.pop()
            if _OPENERS[opener] != ch:
                return DflError(
                    f"`{opener}` opened here is closed by `{ch}`",
                    opened,
                    hint=f"close it with `{_OPENERS[opener]}`",
                )
        elif ch == ";" and stack:
            opener, opened = stack[-1]
            return DflError(
                f"unclosed `{opener}`", opened, hint=f"add the matching `{_OPENERS[opener]}`"
            )
    if string_start is not None:
        return DflError(
            "unterminated string", string_start, hint='close it with `"` on the same line'
        )
    if stack:
        opener, opened = stack[-1]
        return DflError(
            f"unclosed `{opener}`", opened, hint=f"add the matching `{_OPENERS[opener]}`"
        )
    return None


def _syntax_error(exc: UnexpectedInput, text: str) -> DflError:
    """The first mistake in the text: a bracket problem or the parser's own complaint."""
    error = _parser_error(exc, text)
    bracket = _bracket_error(text)
    if bracket is not None and _order(bracket.pos) <= _order(error.pos):
        return bracket
    return error


def _order(pos: ast.Pos) -> tuple[int, int]:
    return pos.line, pos.column


def _after(token: Token) -> ast.Pos:
    """The position just after `token` (where a missing `;` belongs)."""
    line = token.end_line or token.line
    column = token.end_column or token.column + len(token)
    return ast.Pos(line, column, line, column + 1)


_CHARACTER_HINTS = {
    "'": 'strings are written in double quotes: "GARY"',
    "&": "write `and`",
    "|": "write `or`",
    "!": "write `not`, or `!=` for 'different from'",
    "%": "there is no `%` operator",
}


def _character_error(exc: UnexpectedCharacters, text: str) -> DflError:
    char = text[exc.pos_in_stream] if exc.pos_in_stream < len(text) else "?"
    pos = ast.Pos(exc.line, exc.column, exc.line, exc.column + 1)
    if char == '"':
        return DflError("unterminated string", pos, hint='close it with `"` on the same line')
    shown = f"`{char}`" if char.isprintable() and not char.isspace() else f"U+{ord(char):04X}"
    return DflError(f"unexpected character {shown}", pos, hint=_CHARACTER_HINTS.get(char))


def _parser_error(exc: UnexpectedInput, text: str) -> DflError:
    if isinstance(exc, UnexpectedCharacters):
        return _character_error(exc, text)
    if isinstance(exc, UnexpectedEOF):
        token = None
        expected = set(exc.expected)
    else:
        assert isinstance(exc, UnexpectedToken)
        token = exc.token
        expected = set(exc.expected) if exc.expected else set()
    if token is not None and token.type == "$END":
        token = None

    if token is not None:
        line, column = token.line, token.column
    else:
        line, column = text.count("\n") + 1, len(text) - text.rfind("\n")
    previous = _tokens_before(text, line, column)
    last = previous[-1] if previous else None
    statement = _current_statement(previous)

    misspelled = None  # a name that is a near-miss of a keyword the parser expects here
    if token is not None and token.type == "NAME":
        misspelled = did_you_mean(str(token), _keyword_literals(expected))
    if "SEMICOLON" in expected and last is not None and misspelled is None and (
        token is None or token.line > last.end_line or token.type in _STATEMENT_STARTS
    ):
        return DflError(
            f"missing `;` after `{last}`", _after(last), hint="every statement ends with `;`"
        )
    if token is None:
        pos = _after(last) if last is not None else ast.Pos(line, column, line, column + 1)
        return DflError("unexpected end of file: the last statement is unfinished", pos)

    pos = _pos(token)
    word = str(token)
    paren_sum = _reduction_in_parens(statement)
    if paren_sum is not None:
        return DflError(
            f"`{paren_sum}(...)` takes a whole array; a reduction over an index is written "
            f"with braces",
            _pos(paren_sum),
            hint=f"write `{paren_sum}{{i in SET}} ...`",
        )
    if (
        last is not None
        and last.type in ("SUM", "MAX", "MIN")
        and expected
        and expected <= {"LPAR", "LBRACE"}
    ):
        if token.type == "LBRACE":  # `2 ^ sum{...}`, `- -sum{...}`: a reduction out of place
            return DflError(
                f"`{last}{{...}}` can't appear here without parentheses",
                _pos(last),
                hint=f"write `({last}{{...}} ...)`",
            )
        if token.type == "LSQB" or token.type in _OPERAND_STARTS:
            # an operand follows the reduction's keyword: `sum[i in I] ...`, `max x`
            return DflError(
                f"`{last}` takes an index in braces" + (
                    " or a whole array in parentheses" if last.type == "SUM" else ""),
                _pos(last),
                hint=f"write `{last}{{i in SET}} ...`"
                + (" or `sum(x)`" if last.type == "SUM" else "")
                + (" (braces, not brackets)" if token.type == "LSQB" else ""),
            )
        return DflError(
            f"`{last}` is a reserved word and can't be used as a name",
            _pos(last),
            hint=f"rename it, e.g. `{last}_`",
        )
    if word in ("int", "integer", "predicted", "uncertain") and "COLON" in expected and (
        statement and str(statement[0]) == "param"
    ):  # AMPL's `param T integer;`: here the kind follows a colon (else "reserved word")
        kind = "int" if word == "integer" else word
        return DflError(f"unexpected `{word}`: a param's kind follows a `:`", pos,
                        hint=f"write `: {kind}` after the name and index, before any check: "
                             f"`param {statement[1]}{{...}} : {kind} >= 0;`")
    if word == "int" and "INTEGER" in expected:
        return DflError("unexpected `int`: an integer variable is declared `integer`", pos,
                        hint="write `integer` (`int` is a param's kind)")
    if word in KEYWORDS and token.type != "NAME":
        if word in ("if", "not") and "LPAR" in expected:
            construct = "if ... then ... else ..." if word == "if" else "not ..."
            return DflError(
                f"`{word}` can't appear here without parentheses",
                pos,
                hint=f"write `({construct})`",
            )
        if "NAME" in expected:
            return DflError(
                f"`{token}` is a reserved word and can't be used as a name",
                pos,
                hint=f"rename it, e.g. `{token}_`",
            )
    wanted = sorted({_describe_terminal(name) for name in expected})
    if len(wanted) > 6:
        wanted = wanted[:6] + ["..."]
    message = f"unexpected `{token}`"
    if wanted:
        message += "; expected " + ", ".join(wanted)
    hint = None
    glued = last is not None and _order(_after(last)) == _order(pos)
    if word == "=" and glued and str(last) == ":":
        hint = "write `=`, not `:=`"
    elif word == "=" and "EQ" in expected:
        hint = "use `==` to compare"
    elif token.type == "NAME" and word.lower() in ("st", "subjectto", "subject_to", "s_t"):
        hint = "a constraint starts with `subject to` or `s.t.`"
    elif misspelled is not None:
        hint = misspelled  # a misspelled keyword: `minimise`, `binery`, `predicte`
    elif (
        last is not None
        and token.type in _OPERAND_STARTS
        and last.type in _OPERAND_ENDS
        and {"PLUS", "STAR"} & expected
    ):
        hint = f"is an operator missing between `{last}` and `{token}`?"
    return DflError(message, pos, hint=hint)


def _keyword_literals(expected: set[str]) -> list[str]:
    """The reserved words among the expected terminals."""
    words = []
    for name in expected:
        try:
            pattern = _lark().get_terminal(name).pattern
        except KeyError:
            continue
        if pattern.type == "str" and pattern.value in KEYWORDS | {"s.t."}:
            words.append(pattern.value)
    return words


def _current_statement(previous: list[Token]) -> list[Token]:
    """The tokens of the statement being parsed (after the last `;`)."""
    for k in range(len(previous) - 1, -1, -1):
        if previous[k].type == "SEMICOLON":
            return previous[k + 1 :]
    return previous


def _reduction_in_parens(tokens: list[Token]) -> Token | None:
    """`sum(i in I)`: the AMPL index written in parentheses."""
    types = [t.type for t in tokens]
    for k in range(len(tokens) - 3):
        if (
            types[k] in ("SUM", "MAX", "MIN")
            and types[k + 1] == "LPAR"
            and types[k + 2 : k + 4] in (["NAME", "IN"], ["LPAR", "NAME"])
            and "IN" in types[k + 2 : k + 12]
        ):
            return tokens[k]
    return None
