"""Syntax errors at AMPL constructs this language doesn't take, each with what to write
instead: the parser stops at them like at any slip, and these say why and how."""

from __future__ import annotations

from lark import Token

from .. import ast
from ..errors import DflError

_NETWORK = ("AMPL's network declarations (`node`, `arc`) and column-wise coefficients (`obj`, "
            "`coeff`, `to_come`) are not supported",
            "write the objective as an expression and one flow-balance constraint per node: "
            "`subject to Balance {k in NODES}: sum {(i,k) in ARCS} Flow[i,k] - sum {(k,j) in "
            "ARCS} Flow[k,j] = demand[k];`")
_WORDS = {
    "complements": ("AMPL's complementarity constraints (`complements`) are not supported: "
                    "this language states optimization models, not equilibrium problems",
                    "solve the optimization problem whose optimality conditions they are"),
    "suffix": ("AMPL's suffixes (`suffix NAME value`) are not supported",
               "remove the suffix: it annotates the model for a solver or a script"),
    "node": _NETWORK,
    "arc": _NETWORK,
}


def ampl_only(token: Token | None, statement: list[Token]) -> DflError | None:
    """The error for an AMPL-only construct at `token`, or None."""
    if token is None:
        return None
    word = str(token)
    if word in _WORDS and (word != "suffix" or statement[:1] and statement[0] == "var"):
        message, hint = _WORDS[word]
    elif (word == ";" and len(statement) == 2 and str(statement[0]) in ("minimize", "maximize")):
        message, hint = _NETWORK
    else:
        return None
    return DflError(message, ast.Pos(token.line, token.column, token.end_line,
                                     token.end_column), hint=hint)
