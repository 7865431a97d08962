"""The postlexer: AMPL's words that are keywords only where they are used so, and MathProg's
`check` without its colon."""

from __future__ import annotations

from lark import Token
from lark.exceptions import UnexpectedInput


class AmplWords:
    """AMPL's words that are keywords only where they are used so, and names elsewhere (AMPL
    reserves none of them): `prod` is the iterated product only before `{` (the AMPL book's
    bigprod and dist name a set `prod`); `node` and `arc` open a declaration only at the start
    of a statement, before its name; `obj`, `coeff`, `cover` and `from` are clauses of a `var`
    or `arc` only after a comma. A `check` without its colon (MathProg's `check card(C) = 77;`,
    `check {(i,j) in E} i <> j;`) gets one, after its index (`checks_with_colon`), and an `if`
    that is a reduction's body (`sum {j in J} if c then 1`) its parentheses (`reduction_ifs`)."""

    always_accept = ()
    _CLAUSES = {"obj": "OBJ", "coeff": "COEFF", "cover": "COVER", "from": "FROM"}

    def process(self, stream):
        last = head = held = None  # the token before, the statement's first, one held back
        try:
            for token in checks_with_colon(reduction_ifs(stream)):
                if held is not None:
                    out = self._word(held, last, head, token)
                    head = out if last is None or last.type == "SEMICOLON" else head
                    last = out
                    yield out
                    held = None
                if token.type in ("PROD", "NAME"):
                    held = token  # (decided by the token after it)
                    continue
                head = token if last is None or last.type == "SEMICOLON" else head
                last = token
                yield token
        except UnexpectedInput:  # a character no token starts with: the held one still
            if held is not None:  # came before it (`model diet.mod;` is read by its tokens)
                yield self._word(held, last, head, None)
            raise
        if held is not None:
            yield self._word(held, last, head, None)

    def _word(self, token, last, head, after):
        word = str(token)
        if token.type == "PROD":
            kind = "PROD" if after is not None and after.type == "LBRACE" else "NAME"
        elif word in ("node", "arc") and (last is None or last.type == "SEMICOLON") and (
                after is not None and after.type == "NAME"):
            kind = word.upper()
        elif (word in self._CLAUSES and last is not None and last.type == "COMMA"
              and head is not None and head.type in ("VAR", "ARC")):
            kind = self._CLAUSES[word]
        else:
            return token
        return Token.new_borrow_pos(kind, token, token) if kind != token.type else token


def checks_with_colon(stream):
    """The tokens of `stream`, with a `:` added to each `check` statement that has none: after
    the index that follows `check` directly, else after `check` (an expression that starts
    with a name, `check card(C) = 77;`; AMPL's `check NAME {I}: ...` has its colon)."""
    last = None
    tokens = iter(stream)
    for token in tokens:
        if token.type == "CHECK" and (last is None or last.type == "SEMICOLON"):
            held = [token]
            try:
                _read_head(tokens, held)
            finally:  # (a lexer error in the middle: the tokens before it still came first)
                yield from _with_colon(held)
            last = held[-1]
            continue
        last = token
        yield token


def _read_head(tokens, held: list) -> None:
    """Read into `held` the tokens after `check` up to the one after its name and index."""
    token = next(tokens, None)
    if token is not None and token.type == "NAME":
        held.append(token)
        token = next(tokens, None)
    depth = 0
    while token is not None:
        held.append(token)
        depth += (token.type == "LBRACE") - (token.type == "RBRACE")
        if depth <= 0:
            if token.type != "RBRACE":
                return
            token = next(tokens, None)
            if token is not None:
                held.append(token)
            return
        token = next(tokens, None)


def _with_colon(held: list) -> list:
    if len(held) < 2 or held[-1].type == "COLON":
        return held
    at = len(held) - 1 if held[1].type == "LBRACE" and held[-2].type == "RBRACE" else 1
    return [*held[:at], Token.new_borrow_pos("COLON", ":", held[at - 1]), *held[at:]]


_REDUCERS = frozenset("SUM MAX MIN PROD SETOF".split())
_OPENERS = frozenset("LPAR LSQB LBRACE PW_OPEN".split())
_CLOSERS = frozenset("RPAR RSQB RBRACE PW_CLOSE".split())
# what ends a branch of MathProg's `if` (a set expression: `..` and `union` are inside it)
_BRANCH_ENDS = frozenset("SEMICOLON COMMA COLON COLONEQ EQ ASSIGN NE LTGT LE GE LT GT AND OR "
                         "NOT IN WITHIN DEFAULT".split())


def reduction_ifs(stream):
    """The tokens of `stream`, with an `if` that directly follows a reduction's index in
    parentheses, up to where MathProg ends it: each branch is a set or arithmetic expression,
    ended by a comparison, `and`, `or`, `,`, `;` or a closing bracket, and an `else` belongs
    to the nearest `if` (`sum {j in J} if c[j] then x[j] <= 5` is `sum {j in J} (if c[j] then
    x[j]) <= 5`)."""
    tokens = iter(stream)
    level, watch, held = 0, [], []  # brace depth; the depths where reductions' indices open
    while (token := held.pop() if held else next(tokens, None)) is not None:
        yield token
        if watch and watch[-1] == -1:  # (the token after a reducer: its index, or `sum(x)`)
            if token.type == "LBRACE":
                watch[-1] = level
            else:
                watch.pop()
        if token.type in _REDUCERS:
            watch.append(-1)
        level += (token.type == "LBRACE") - (token.type == "RBRACE")
        if token.type != "RBRACE" or not watch or watch[-1] != level:
            continue
        watch.pop()
        after = next(tokens, None)
        if after is None or after.type != "IF":
            held += [after] if after is not None else []
            continue
        body, end = _if_body(after, tokens)
        yield Token.new_borrow_pos("LPAR", "(", after)
        yield from reduction_ifs(body)
        yield Token.new_borrow_pos("RPAR", ")", body[-1])
        held += [end] if end is not None else []


def _if_body(first, tokens) -> tuple[list, object]:
    """The tokens of the `if` expression that starts with `first`, and the token after it."""
    body, ifs, depth = [first], ["if"], 0  # each open `if`: in its "if" part, "then" or "else"
    for token in tokens:
        kind = token.type
        if depth == 0 and (kind in _CLOSERS or kind in _BRANCH_ENDS or kind in ("THEN", "ELSE")):
            while ifs and ifs[-1] != "if" and not (kind == "ELSE" and ifs[-1] == "then"):
                ifs.pop()  # (the branches this token ends)
            if not ifs or kind in _CLOSERS:
                return body, token
            if kind in ("THEN", "ELSE"):
                ifs[-1] = kind.lower()
        elif depth == 0 and kind == "IF":
            ifs.append("if")
        depth += (kind in _OPENERS) - (kind in _CLOSERS)
        body.append(token)
    return body, None
