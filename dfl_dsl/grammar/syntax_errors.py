"""Friendly syntax errors, located at the mistake: a missing `;` after the last token of the
unfinished statement, an unclosed bracket at the bracket that was opened, a reserved word used
as a name at that word.

Mistakes that depend on where the parser is (a reduction's index written with brackets, a
param's kind without its colon) are recognized from a table of examples, as lark's
`UnexpectedInput.match_examples` does: each example is parsed once and files its handler under
the parser's state at its error — here, what the parser expects there (`expected`) and the
token before, which are the same however deep the expression is (match_examples compares whole
state stacks, so an example would only match an error at its own nesting depth). The rest
follow from the token, what came before it and what the parser expected.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable
from dataclasses import dataclass

from lark import Lark, Token
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput

from .. import ast
from ..errors import DflError, did_you_mean
from .ampl_only import ampl_only

KEYWORDS = frozenset(
    "set param var minimize maximize subject to expr model in within binary integer int "
    "predicted uncertain psd default sum if then else and or not stiefel max min union diff "
    "inter inf symmetric subj check cross setof ordered circular dimen symbolic logical Infinity "
    "symdiff mod div by less exists forall".split()
)
# terminals the postlexer makes of names (ampl_words.AmplWords)
CONTEXT_WORDS = frozenset("NODE ARC OBJ COEFF COVER FROM".split())
# words that start a param's attribute (after a value they need a comma before them)
PARAM_ATTRIBUTES = frozenset("default int integer binary logical symbolic predicted uncertain psd "
                             "symmetric in".split())
# AMPL's commands, which run a model (and the words that start its loops and branches)
SCRIPT_WORDS = frozenset("solve display let option model data include commands reset print "
                         "printf shell write expand show fix unfix drop restore objective for "
                         "repeat if end quit exit close update".split())
OPENERS = {"(": ")", "[": "]", "{": "}"}
CLOSERS = {v: k for k, v in OPENERS.items()}
# Statements start with these; none of them can continue an expression.
STATEMENT_STARTS = frozenset("SET PARAM VAR EXPR MODEL MINIMIZE MAXIMIZE SUBJECT ST".split())
# Tokens an expression can end with (for the "missing operator" hint).
OPERAND_ENDS = frozenset("NAME NUMBER STRING INF INFINITY RPAR RSQB RBRACE TRANSPOSE".split())
OPERAND_STARTS = frozenset("NAME NUMBER STRING INF INFINITY LPAR".split())
CHARACTER_HINTS = {
    "|": "write `or`",
    "%": "there is no `%` operator",
}


@dataclass
class Context:
    """Where the parser stopped: the token it refused (None at the end of the text), what it
    expected there, and the tokens before it."""

    lark: Lark
    token: Token | None
    expected: set[str]
    previous: list[Token]
    line: int
    column: int

    @property
    def last(self) -> Token | None:
        return self.previous[-1] if self.previous else None

    @property
    def statement(self) -> list[Token]:
        """The tokens of the statement being parsed (after the last `;`)."""
        for k in range(len(self.previous) - 1, -1, -1):
            if self.previous[k].type == "SEMICOLON":
                return self.previous[k + 1 :]
        return self.previous

    def misspelled(self) -> str | None:
        """A hint when the token is a near-miss of a keyword the parser expects here."""
        if self.token is None or self.token.type != "NAME" or len(self.token) < 2:
            return None  # (a one-letter name is a name: `3 y` misses an operator, not `by`)
        words = []
        for name in self.expected:
            try:
                pattern = self.lark.get_terminal(name).pattern
            except KeyError:
                continue
            if pattern.type == "str" and pattern.value in KEYWORDS | {"s.t."}:
                words.append(pattern.value)
        return did_you_mean(str(self.token), words)


def syntax_error(exc: UnexpectedInput, text: str, lark: Lark) -> DflError:
    """The first mistake in the text: a bracket problem or the parser's own complaint."""
    error = _parser_error(exc, text, lark)
    bracket = bracket_error(text)
    if bracket is not None and _order(bracket.pos) <= _order(error.pos):
        return bracket
    return error


def _parser_error(exc: UnexpectedInput, text: str, lark: Lark) -> DflError:
    if isinstance(exc, UnexpectedCharacters):
        before = _tokens_before(lark, text, exc.line, exc.column)
        dot = text[exc.pos_in_stream : exc.pos_in_stream + 1] == "."  # `model diet.mod;`
        return _scripting(before, None, dot) or _character_error(exc, text)
    token = None if isinstance(exc, UnexpectedEOF) else exc.token
    if token is not None and token.type == "$END":
        token = None
    if token is not None:
        line, column = token.line, token.column
    else:
        line, column = text.count("\n") + 1, len(text) - text.rfind("\n")
    ctx = Context(lark, token, set(exc.expected or ()), _tokens_before(lark, text, line, column),
                  line, column)
    ctx = _statement_word(ctx) or ctx
    error = _scripting(ctx.statement, ctx.token) or ampl_only(ctx.token, ctx.statement)
    if error is not None:
        return error
    for rule in (_missing_semicolon, _end_of_file, _index_in_parentheses):
        error = rule(ctx)
        if error is not None:
            return error
    key = (frozenset(ctx.expected), ctx.last.type if ctx.last is not None else None)
    for handler in _handlers(lark).get(key, ()):
        error = handler(ctx)
        if error is not None:
            return error
    return _unexpected(ctx)


def _handlers(lark: Lark) -> dict[tuple[frozenset[str], str | None], list[Handler]]:
    """The table: each example's parser state at its error -> the handlers of that spot
    (LALR merges spots: a var's and a param's bounds share states), built on the first syntax
    error, then kept. A generated example that happens to be valid files nothing."""
    if not _TABLE:
        for handler, examples in EXAMPLES:
            for example in examples:
                try:
                    lark.parse(example)
                except UnexpectedInput as exc:
                    before = _tokens_before(lark, example, exc.line, exc.column)
                    key = (frozenset(exc.expected or ()), before[-1].type if before else None)
                    if handler not in _TABLE.setdefault(key, []):
                        _TABLE[key].append(handler)
    return _TABLE


# ---------------------------------------------------------------- rules of any parser state
def _scripting(statement: list[Token], token: Token | None, dot: bool = False
               ) -> DflError | None:
    """An AMPL command (`solve;`, `display x;`, `let p := 3;`, `model diet.mod;`) in the
    statement where the parser stopped: commands run models, they aren't part of one."""
    if statement and statement[-1].type == "SEMICOLON":
        statement = []  # (a character error's tokens run to the error: the statement is new)
    for k in range(len(statement) - 1, -1, -1):
        if statement[k].type == "SEMICOLON":
            statement = statement[k + 1 :]
            break
    first = statement[0] if statement else token
    if first is None or str(first) not in SCRIPT_WORDS:
        return None
    if str(first) == "model" and len(statement) != (2 if dot else 1):
        return None  # `model NAME` with a slip after it: this language's model statement
    return DflError(f"`{first}` is an AMPL command; AMPL scripting isn't part of a model file",
                    _pos(first), hint="run `dfl solve MODEL --data DATA` (`--json` shows "
                    "every value); the model file holds the model and, after `data;`, its data")


def _statement_word(ctx: Context) -> Context | None:
    """`minimise z: x;`, `st c: ...`, `node N;`: a name opens a statement as AMPL's bare
    constraint `NAME: ...` does, so the parser stops at the word after it. The mistake is the
    first word, where a statement keyword was expected: the context moves back to it."""
    statement = ctx.statement
    if len(statement) != 1 or statement[0].type != "NAME" or ctx.token is None or (
            ctx.token.type in ("COLON", "LBRACE", "LSQB")):
        return None
    try:
        ctx.lark.parse("+")  # (the terminals a statement may start with)
    except UnexpectedInput as exc:
        starts = set(exc.expected or ()) - {"NAME"}
    word = statement[0]
    return Context(ctx.lark, word, starts, ctx.previous[:-1], word.line, word.column)


def _missing_semicolon(ctx: Context) -> DflError | None:
    last, token = ctx.last, ctx.token
    if "SEMICOLON" in ctx.expected and last is not None and last.type != "SEMICOLON" and (
        ctx.misspelled() is None) and (
        token is None or token.line > last.end_line or token.type in STATEMENT_STARTS
    ):
        return DflError(f"missing `;` after `{last}`", _after(last),
                        hint="every statement ends with `;`")
    return None


def _end_of_file(ctx: Context) -> DflError | None:
    if ctx.token is not None:
        return None
    last = ctx.last
    pos = _after(last) if last is not None else ast.Pos(ctx.line, ctx.column, ctx.line,
                                                        ctx.column + 1)
    return DflError("unexpected end of file: the last statement is unfinished", pos)


def _index_in_parentheses(ctx: Context) -> DflError | None:
    """`sum(i in I)`: the AMPL index written in parentheses."""
    tokens = ctx.statement
    types = [t.type for t in tokens]
    for k in range(len(tokens) - 3):
        if (types[k] in ("SUM", "MAX", "MIN") and types[k + 1] == "LPAR"
                and types[k + 2 : k + 4] in (["NAME", "IN"], ["LPAR", "NAME"])
                and "IN" in types[k + 2 : k + 12]):
            word = tokens[k]
            return DflError(f"`{word}(...)` takes a whole array; a reduction over an index is "
                            "written with braces", _pos(word),
                            hint=f"write `{word}{{i in SET}} ...`")
    return None


def _unexpected(ctx: Context) -> DflError:
    """A keyword where a name belongs, or the generic message: what came, what was
    expected, and a hint for the usual slips."""
    token, word = ctx.token, str(ctx.token)
    if word in KEYWORDS and token.type != "NAME" and "NAME" in ctx.expected:
        return _reserved(token)
    # (AMPL's words that the postlexer makes keywords in context are names to a reader)
    wanted = sorted({_describe(ctx.lark, name) for name in ctx.expected
                     if name not in CONTEXT_WORDS})
    if len(wanted) > 6:
        wanted = wanted[:6] + ["..."]
    message = f"unexpected `{token}`" + ("; expected " + ", ".join(wanted) if wanted else "")
    return DflError(message, _pos(token), hint=_slip(ctx))


def _slip(ctx: Context) -> str | None:
    token, last, word = ctx.token, ctx.last, str(ctx.token)
    if token.type == "NAME" and word.lower() in ("st", "subjectto", "subject_to", "s_t"):
        return "a constraint starts with `subject to` or `s.t.`"
    if "COMMA" in ctx.expected and word in PARAM_ATTRIBUTES and ctx.statement and (
            str(ctx.statement[0]) == "param"):
        return "after a value (`= e`, `default e`), the next attribute follows a comma"
    if word in ("<", ">") and last is not None and str(last) == "=" and (
            (last.end_line, last.end_column) == (token.line, token.column)):
        return f"did you mean `{word}=`?"  # `x =< 3`, `x => 0`: the comparison's two halves
    misspelled = ctx.misspelled()  # `minimise`, `binery`, `predicte`
    if misspelled is not None:
        return misspelled
    if (last is not None and token.type in OPERAND_STARTS and last.type in OPERAND_ENDS
            and {"PLUS", "STAR"} & ctx.expected):
        return f"is an operator missing between `{last}` and `{token}`?"
    return None


def _reserved(word: Token) -> DflError:
    return DflError(f"`{word}` is a reserved word and can't be used as a name", _pos(word),
                    hint=f"rename it, e.g. `{word}_`")


# ---------------------------------------------------------------- mistakes by parser state
# Each handler knows the usual mistakes at one spot of the grammar, found by the examples
# below, and returns None for a token it doesn't expect there.
def _after_reducer(ctx: Context) -> DflError | None:
    """After `sum`, `max` or `min`, where a reduction may start, or only a call (`2 ^ ...`)."""
    last, token = ctx.last, ctx.token
    if last is None or last.type not in ("SUM", "MAX", "MIN"):
        return None
    if token.type == "LBRACE":  # `2 ^ sum{...}`, `- -sum{...}`: a reduction out of place
        return DflError(f"`{last}{{...}}` can't appear here without parentheses", _pos(last),
                        hint=f"write `({last}{{...}} ...)`")
    if token.type == "LSQB" or token.type in OPERAND_STARTS:
        # an operand follows the reduction's keyword: `sum[i in I] ...`, `max x`
        whole = last.type == "SUM"
        return DflError(
            f"`{last}` takes an index in braces"
            + (" or a whole array in parentheses" if whole else ""), _pos(last),
            hint=f"write `{last}{{i in SET}} ...`" + (" or `sum(x)`" if whole else "")
            + (" (braces, not brackets)" if token.type == "LSQB" else ""))
    return _reserved(last)  # nothing can follow it: a name, spelled as a keyword


def _var_domain(ctx: Context) -> DflError | None:
    if str(ctx.token) != "int" or "INTEGER" not in ctx.expected:
        return None
    return DflError("unexpected `int`: an integer variable is declared `integer`",
                    _pos(ctx.token), hint="write `integer` (`int` is a param's kind)")


def _operand(ctx: Context) -> DflError | None:
    """Where an operand belongs: `if` and `not` need parentheses inside arithmetic."""
    word = str(ctx.token)
    if word not in ("if", "not", "exists", "forall") or "LPAR" not in ctx.expected:
        return None
    construct = {"if": "if ... then ... else ...", "not": "not ..."}.get(word, f"{word}{{...}} ...")
    return DflError(f"`{word}` can't appear here without parentheses", _pos(ctx.token),
                    hint=f"write `({construct})`")


Handler = Callable[[Context], DflError | None]
# the ways an operand ends, and the places one may start (`if` and `not` can't, unbracketed)
_ENDS = ("0", "a", "a[1]", "(a)", "a.T", "inf", '"s"')
_OPERATORS = ("a + ", "a - ", "a * ", "a / ", "a @ ", "a mod ", "a div ", "a <= ", "a >= ",
              "a < ", "a > ", "a == ", "a != ", "a = ", "a <> ", "2 ^ ", "2 ** ", "- ", "a .. ",
              "a .. b by ", "a in ")
_STARTS = tuple(f"minimize z: {op}" for op in _OPERATORS) + (
    "param P[", "param P[n, ", "param c{", "param c{I, ", "param c >= ", "param c = ",
    "param c default ", "var x >= ", "var x{", "var x[", "set S = ", "set S within ",
    "minimize z: sum{", "minimize z: sum{i in I: ", "minimize z: f(", "minimize z: x[",
    "minimize z: x[1, ", "minimize z: f(1, ", "minimize z: (", "minimize z: {",
    "var x{I} ", "param c{I} ", "minimize z: sum{i in I} ", "minimize z: sum{i in I: a} ",
    "minimize z: (if a == b ", "minimize z: (if a ", "minimize z: (a and not ")
EXAMPLES: list[tuple[Handler, list[str]]] = [
    # after a reduction's keyword, where a reduction may start or only a call (`2 ^ sum(x)`)
    (_after_reducer, [f"minimize z: {op}{word}{tail};" for op in ("", *_OPERATORS)
                      for word in ("sum", "max", "min")
                      for tail in ("", "{i in I} x", "[i in I] x", " a", " 3", ' "a"', " inf")]),
    # where a variable's domain would go: after its name, index or a bound
    (_var_domain, [f"var x{head} int;" for head in (
        "", "{I}", "[n]", " binary", " in [0, 1]", *(f" >= {e}" for e in _ENDS))]),
    # where an operand belongs
    (_operand, [f"{start}{word} a;" for start in _STARTS
                for word in ("if", "not", "exists{i in I}")]),
]
_TABLE: dict[tuple[frozenset[str], str | None], list[Handler]] = {}


# ---------------------------------------------------------------- positions and tokens
def _pos(token: Token) -> ast.Pos:
    return ast.Pos(token.line or 0, token.column or 0, token.end_line or 0, token.end_column or 0)


def _order(pos: ast.Pos) -> tuple[int, int]:
    return pos.line, pos.column


def _after(token: Token) -> ast.Pos:
    """The position just after `token` (where a missing `;` belongs)."""
    line = token.end_line or token.line
    column = token.end_column or token.column + len(token)
    return ast.Pos(line, column, line, column + 1)


def _tokens_before(lark: Lark, text: str, line: int, column: int) -> list[Token]:
    """The tokens of `text` that start before (line, column); stops at a lexing error."""
    tokens: list[Token] = []
    try:
        for token in lark.lex(text, dont_ignore=False):
            if (token.line, token.column) >= (line, column):
                break
            tokens.append(token)
    except UnexpectedInput:
        pass
    return tokens


def _describe(lark: Lark, name: str) -> str:
    friendly = {"NAME": "a name", "NUMBER": "a number", "STRING": "a string",
                "$END": "the end of the file", "TRANSPOSE": "`.T`", "POW": "`^`"}
    if name in friendly:
        return friendly[name]
    try:
        pattern = lark.get_terminal(name).pattern
    except KeyError:
        return name
    return f"`{pattern.value}`" if pattern.type == "str" else name.lower()


def _character_error(exc: UnexpectedCharacters, text: str) -> DflError:
    char = text[exc.pos_in_stream] if exc.pos_in_stream < len(text) else "?"
    pos = ast.Pos(exc.line, exc.column, exc.line, exc.column + 1)
    if char in "\"'":
        return _unterminated(pos, char)
    shown = f"`{char}`" if char.isprintable() and not char.isspace() else f"U+{ord(char):04X}"
    return DflError(f"unexpected character {shown}", pos, hint=CHARACTER_HINTS.get(char))


# what the bracket scan steps over or stops at: comments, strings (closed or not), brackets, `;`
_SCAN = re.compile(r"""#[^\n]*|/\*(?:.|\n)*?\*/|/\*|"(?:[^"\n]|"")*"|'(?:[^'\n]|'')*'"""
                   r"""|["'();\[\]{}]""")


def bracket_error(text: str) -> DflError | None:
    """An unclosed or mismatched bracket, reported where it was opened (or stray-closed); an
    unterminated string or an unclosed `/*` comment, where it starts."""
    stack: list[tuple[str, ast.Pos]] = []
    newlines = [k for k, ch in enumerate(text) if ch == "\n"]
    for match in _SCAN.finditer(text):
        found = match.group()
        if len(found) > 1 and found != "/*":
            continue  # a comment or a whole string
        line = bisect.bisect_left(newlines, match.start()) + 1
        column = match.start() - (newlines[line - 2] if line > 1 else -1)
        here = ast.Pos(line, column, line, column + len(found))
        if found == "/*":
            return DflError("unclosed comment `/*`", here, hint="close it with `*/`")
        if found in "\"'":
            return _unterminated(here, found)
        if found in OPENERS:
            stack.append((found, here))
        elif found in CLOSERS:
            error = _closed(stack, found, here)
            if error is not None:
                return error
        elif stack:  # `;`
            return _unclosed(*stack[-1])
    return _unclosed(*stack[-1]) if stack else None


def _closed(stack: list[tuple[str, ast.Pos]], ch: str, here: ast.Pos) -> DflError | None:
    if not stack:
        return DflError(f"`{ch}` closes nothing", here, hint="remove it")
    opener, opened = stack.pop()
    if OPENERS[opener] != ch:
        return DflError(f"`{opener}` opened here is closed by `{ch}`", opened,
                        hint=f"close it with `{OPENERS[opener]}`")
    return None


def _unclosed(opener: str, opened: ast.Pos) -> DflError:
    return DflError(f"unclosed `{opener}`", opened, hint=f"add the matching `{OPENERS[opener]}`")


def _unterminated(where: ast.Pos, quote: str = '"') -> DflError:
    return DflError("unterminated string", where, hint=f"close it with `{quote}` on the same line")
