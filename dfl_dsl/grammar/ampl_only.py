"""Syntax errors at AMPL constructs this language doesn't take, each with what to write
instead: the parser stops at them like at any slip, and these say why and how."""

from __future__ import annotations

from lark import Token

from .. import ast
from ..errors import DflError

_WORDS = {
    "complements": ("AMPL's complementarity constraints (`complements`) are not supported: "
                    "this language states optimization models, not equilibrium problems",
                    "solve the optimization problem whose optimality conditions they are"),
    "suffix": ("AMPL's suffixes (`suffix NAME value`) are not supported",
               "remove the suffix: it annotates the model for a solver or a script"),
}
# words the parser reads as a name and stops just after: the error points at the word
_BEFORE = {
    "numberof": ("AMPL's `numberof` (how many members of a list equal a value) is not "
                 "supported: over variables it is a constraint-programming count",
                 "count with binaries: `z{i in I, v in V} binary`, `sum{v in V} z[i,v] = 1`, "
                 "`x[i] = sum{v in V} v * z[i,v]`; then `numberof v in (...)` is "
                 "`sum{i in I} z[i,v]`"),
}


def ampl_only(token: Token | None, statement: list[Token]) -> DflError | None:
    """The error for an AMPL-only construct at `token`, or None."""
    if token is None:
        return None
    if statement and str(statement[-1]) in _BEFORE:
        token = statement[-1]
        message, hint = _BEFORE[str(token)]
        return DflError(message, ast.Pos(token.line, token.column, token.end_line,
                                         token.end_column), hint=hint)
    word = str(token)
    if word in _WORDS and (word != "suffix" or statement[:1] and statement[0] == "var"):
        message, hint = _WORDS[word]
    else:
        return None
    return DflError(message, ast.Pos(token.line, token.column, token.end_line,
                                     token.end_column), hint=hint)
