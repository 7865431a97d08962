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


def ampl_only(token: Token | None, statement: list[Token]) -> DflError | None:
    """The error for an AMPL-only construct at `token`, or None."""
    if token is None:
        return None
    word = str(token)
    if word in _WORDS and (word != "suffix" or statement[:1] and statement[0] == "var"):
        message, hint = _WORDS[word]
    else:
        return None
    return DflError(message, ast.Pos(token.line, token.column, token.end_line,
                                     token.end_column), hint=hint)
