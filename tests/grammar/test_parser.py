"""The grammar and the text -> AST transformer: every acceptance model parses, and the
precedence rules of LANGUAGE.md §3 give the trees they promise."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from lark import Lark

from dfl_dsl import ast
from dfl_dsl.errors import DflError
from dfl_dsl.grammar.depth import MAX_NESTING
from dfl_dsl.grammar.parser import LARK_OPTIONS, _ToAst, grammar_text, parse

SPEC = Path(__file__).parents[2] / ".." / "shared" / "spec"
SPEC_MODELS = sorted(SPEC.glob("*.opt")) if SPEC.is_dir() else []


# ---------------------------------------------------------------------- helpers
def sx(node: ast.Node | None) -> str:
    """A compact s-expression of an expression tree, for shape assertions."""
    if node is None:
        return "None"
    if isinstance(node, ast.Number):
        return "inf" if node.value == math.inf else repr(node.value)
    if isinstance(node, ast.String):
        return f'"{node.value}"'
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Subscript):
        return f"{sx(node.base)}[{', '.join(sx(a) for a in node.args)}]"
    if isinstance(node, ast.Transpose):
        return f"(T {sx(node.operand)})"
    if isinstance(node, ast.Call):
        return f"{node.func}({', '.join(sx(a) for a in node.args)})"
    if isinstance(node, (ast.BinOp, ast.BoolOp, ast.SetOp)):
        return f"({node.op} {sx(node.left)} {sx(node.right)})"
    if isinstance(node, ast.Neg):
        return f"(- {sx(node.operand)})"
    if isinstance(node, ast.Not):
        return f"(not {sx(node.operand)})"
    if isinstance(node, ast.Power):
        return f"(^ {sx(node.base)} {sx(node.exponent)})"
    if isinstance(node, ast.Compare):
        parts = [sx(node.operands[0])]
        for op, operand in zip(node.ops, node.operands[1:], strict=True):
            parts += [op, sx(operand)]
        return f"(cmp {' '.join(parts)})"
    if isinstance(node, ast.Member):
        return f"(in {sx(node.element)} {sx(node.set)})"
    if isinstance(node, ast.IfThenElse):
        return f"(if {sx(node.cond)} {sx(node.then)} {sx(node.orelse)})"
    if isinstance(node, ast.Reduce):
        return f"({node.op}{sx(node.index)} {sx(node.body)})"
    if isinstance(node, ast.SetIndex):
        items = ", ".join(sx(i) for i in node.items)
        filt = f" : {sx(node.filter)}" if node.filter is not None else ""
        return "{" + items + filt + "}"
    if isinstance(node, ast.IndexItem):
        if not node.names:
            return sx(node.set)
        if node.parts:
            return f"({', '.join(sx(p) for p in node.parts)}) in {sx(node.set)}"
        names = node.names[0] if len(node.names) == 1 else f"({', '.join(node.names)})"
        return f"{names} in {sx(node.set)}"
    if isinstance(node, ast.ShapeIndex):
        return "[" + ", ".join(sx(d) for d in node.dims) + "]"
    if isinstance(node, ast.Range):
        return f"(.. {sx(node.lo)} {sx(node.hi)})"
    if isinstance(node, ast.SetLiteral):
        return "{" + ", ".join(sx(e) for e in node.elements) + "}"
    if isinstance(node, ast.Tuple):
        return "(" + ", ".join(sx(e) for e in node.items) + ")"
    if isinstance(node, ast.SetOf):
        return f"(setof{sx(node.index)} {sx(node.body)})"
    raise AssertionError(f"unexpected node {node!r}")


def body(text: str) -> ast.Expr:
    """The tree of an expression (parsed as an objective; nothing is checked)."""
    model = parse(f"minimize z: {text};")
    (objective,) = model.statements
    assert isinstance(objective, ast.Objective)
    return objective.body


def tree(text: str) -> str:
    return sx(body(text))


# ---------------------------------------------------------------------- acceptance models
@pytest.mark.skipif(not SPEC_MODELS, reason="the acceptance models (../shared/spec) are absent")
@pytest.mark.parametrize("path", SPEC_MODELS, ids=lambda p: p.stem)
def test_every_spec_model_parses(path: Path) -> None:
    model = parse(path.read_text(), path.name)
    assert model.filename == path.name
    assert model.statements
    first = model.statements[0]
    assert isinstance(first, ast.ModelDecl) and first.name == path.stem
    for stmt in model.statements:
        assert stmt.pos.line >= 1


# ---------------------------------------------------------------------- precedence (§3)
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # a reduction's body is the multiplicative expression that follows it
        ("sum{i in I} c[i] * x[i] + b", "(+ (sum{i in I} (* c[i] x[i])) b)"),
        ("a * sum{i in I} x[i]", "(* a (sum{i in I} x[i]))"),
        ("a * sum{i in I} x[i] * y[i]", "(* a (sum{i in I} (* x[i] y[i])))"),
        ("b - sum{i in I} x[i] - c", "(- (- b (sum{i in I} x[i])) c)"),
        ("-sum{i in I} x[i] + 1", "(+ (- (sum{i in I} x[i])) 1)"),
        ("a * -sum{i in I} x[i]", "(* a (- (sum{i in I} x[i])))"),
        ("sum{i in I} sum{j in J} x[i, j]", "(sum{i in I} (sum{j in J} x[i, j]))"),
        ("max{i in I} x[i] + min{j in J} y[j]", "(+ (max{i in I} x[i]) (min{j in J} y[j]))"),
        ("sum{i in I} (x[i] + 1)", "(sum{i in I} (+ x[i] 1))"),
        # arithmetic
        ("a + b * c", "(+ a (* b c))"),
        ("a - b - c", "(- (- a b) c)"),
        ("a / b * c", "(* (/ a b) c)"),
        ("A @ x + b", "(+ (@ A x) b)"),
        ("A @ B @ x", "(@ (@ A B) x)"),
        ("(a + b) * c", "(* (+ a b) c)"),
        # unary minus is looser than ^, which is right-associative
        ("-x^2", "(- (^ x 2))"),
        ("x^2^3", "(^ x (^ 2 3))"),
        ("x^-1", "(^ x -1)"),
        ("-x * y", "(* (- x) y)"),
        ("--x", "(- (- x))"),
        ("-3", "-3"),
        ("2 * -3", "(* 2 -3)"),
        # postfix indexing and .T bind tightest
        ("A.T @ x", "(@ (T A) x)"),
        ("x.T @ A @ x", "(@ (@ (T x) A) x)"),
        ("A[i, j].T", "(T A[i, j])"),
        ("A.T[0]", "(T A)[0]"),
        ("-A.T", "(- (T A))"),
        ("x[i]^2", "(^ x[i] 2)"),
        ("x[0 .. 1]", "x[(.. 0 1)]"),
        ("(x + y)[2]", "(+ x y)[2]"),
        # calls
        ("sum(x)", "sum(x)"),
        ("max(a, b)", "max(a, b)"),
        ("quad_form(x, P) + q @ x", "(+ quad_form(x, P) (@ q x))"),
        ("cvar(0.9, sum{i in I} c[i] * x[i])", "cvar(0.9, (sum{i in I} (* c[i] x[i])))"),
        ("eye(n)", "eye(n)"),
        # conditions: not > comparison, and > or
        ("a or b and c", "(or a (and b c))"),
        ("not a == b", "(not (cmp a == b))"),
        ("not not a", "(not (not a))"),
        ("a <= b + 1", "(cmp a <= (+ b 1))"),
        ("0 <= x <= 1", "(cmp 0 <= x <= 1)"),
        ("a != b", "(cmp a != b)"),
        ("i in S and j in T", "(and (in i S) (in j T))"),
        # if/then/else is the loosest and nests to the right
        ("if a == 1 then x else y + 1", "(if (cmp a == 1) x (+ y 1))"),
        (
            "if v == t then 1 else if v == s then -1 else 0",
            "(if (cmp v == t) 1 (if (cmp v == s) -1 0))",
        ),
        ("(if a then b else c) + 1", "(+ (if a b c) 1)"),
        ("if a then (if b then c else d) else e", "(if a (if b c d) e)"),
        # ranges and sets
        ("t .. t + d - 1", "(.. t (- (+ t d) 1))"),
        ("1 .. n", "(.. 1 n)"),
        ("S * T", "(* S T)"),
        ("A union B diff C", "(diff (union A B) C)"),
        ("A union B inter C", "(union A (inter B C))"),
        ("A inter B inter C", "(inter (inter A B) C)"),
        ("S * T union U", "(union (* S T) U)"),
        ('{"a", "b", 3}', '{"a", "b", 3}'),
        ("{}", "{}"),
    ],
)
def test_precedence(text: str, expected: str) -> None:
    assert tree(text) == expected


def test_if_in_arithmetic_needs_parentheses() -> None:
    with pytest.raises(DflError) as info:
        body("x + if a then b else c")
    assert "parentheses" in info.value.message
    assert info.value.hint == "write `(if ... then ... else ...)`"


def test_an_int_variable_gets_a_hint() -> None:
    with pytest.raises(DflError) as info:
        parse("var x{1..3} int >= 0;")
    assert "unexpected `int`" in info.value.message and "write `integer`" in info.value.hint


# ---------------------------------------------------------------------- indices
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("sum{i in I} x[i]", "(sum{i in I} x[i])"),
        ("sum{(i, v) in ARCS} f[i, v]", "(sum{(i, v) in ARCS} f[i, v])"),
        ("sum{(i, j, k) in T3} f[i, j, k]", "(sum{(i, j, k) in T3} f[i, j, k])"),
        ("sum{i in I, j in J} c[i, j]", "(sum{i in I, j in J} c[i, j])"),
        ("sum{i in I : c[i] >= 0} x[i]", "(sum{i in I : (cmp c[i] >= 0)} x[i])"),
        (
            "sum{u in t .. t + d[j] - 1} p[u]",
            "(sum{u in (.. t (- (+ t d[j]) 1))} p[u])",
        ),
        ("sum{I} 1", "(sum{I} 1)"),
        ("sum{i in I * J} 1", "(sum{i in (* I J)} 1)"),
        (
            "sum{i in I : i in S and not i == 2} 1",
            "(sum{i in I : (and (in i S) (not (cmp i == 2)))} 1)",
        ),
    ],
)
def test_set_index(text: str, expected: str) -> None:
    assert tree(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("sum{j in S : (j, i) in PAIRS} 1", "(sum{j in S : (in (j, i) PAIRS)} 1)"),
        ("sum{(s, j) in ARCS} f[s, j]", "(sum{(s, j) in ARCS} f[s, j])"),
        ('sum{("a", j) in ARCS} 1', '(sum{("a", j) in ARCS} 1)'),
        ("sum{(t + 1, u) in P} 1", "(sum{((+ t 1), u) in P} 1)"),
    ],
)
def test_tuple_components_and_membership(text: str, expected: str) -> None:
    assert tree(text) == expected


def test_tuple_pattern_keeps_components_that_are_no_names() -> None:
    reduce_ = body('sum{(t + 1, u, "a") in P} 1')
    item = reduce_.index.items[0]
    assert item.names == ("", "u", "")
    assert isinstance(item.parts[0], ast.BinOp) and isinstance(item.parts[2], ast.String)
    assert reduce_.index.dummies == ("u",)


def test_tuple_pattern_names() -> None:
    reduce_ = body("sum{(i, v) in ARCS, k in K} f[i, v]")
    assert isinstance(reduce_, ast.Reduce)
    assert reduce_.index.dummies == ("i", "v", "k")
    assert [item.names for item in reduce_.index.items] == [("i", "v"), ("k",)]


# ---------------------------------------------------------------------- statements
MODEL = """\
model demo;   # a comment after a statement
# a whole-line comment
set I;
set T = 1..horizon;
set ARCS within NODES * NODES;
param n : int;
param c{I} >= 0 default 1;
param P[n, n] psd;
param C[n, n] = A.T @ A;
param value{ITEMS} : predicted;
param price{T} : uncertain;
param group{ITEMS} in GROUPS;
param cap : int, predicted;
param sym[n, n] symmetric;
param bounded > 0 < 10;
var x{I} >= 0 <= c;
var b{I} binary;
var k integer >= -3;
var flow{ARCS} in [0, 1];
var X[n, r] in stiefel;
expr cost{i in I} = c[i] * x[i];
minimize total: sum{i in I} cost[i];
subject to cap1{i in I}: x[i] <= 1;
s.t. cap2: sum{i in I} x[i] >= 1;
"""


def test_statement_kinds() -> None:
    model = parse(MODEL, "demo.opt")
    kinds = [type(s).__name__ for s in model.statements]
    assert kinds == (
        ["ModelDecl", "SetDecl", "SetDecl", "SetDecl"]
        + ["ParamDecl"] * 10
        + ["VarDecl"] * 5
        + ["ExprDecl", "Objective", "Constraint", "Constraint"]
    )
    by_name = {s.name: s for s in model.statements}

    assert sx(by_name["T"].value) == "(.. 1 horizon)"
    assert by_name["T"].within is None
    assert sx(by_name["ARCS"].within) == "(* NODES NODES)"

    assert by_name["n"].kinds == ("int",)
    c = by_name["c"]
    assert [(k.op, sx(k.operand)) for k in c.checks] == [(">=", "0")]
    assert sx(c.default) == "1" and c.value is None
    assert [k.op for k in by_name["P"].checks] == ["psd"]
    assert sx(by_name["C"].value) == "(@ (T A) A)"
    assert by_name["value"].is_predicted and not by_name["value"].is_uncertain
    assert by_name["price"].is_uncertain
    assert sx(by_name["group"].element_set) == "GROUPS"
    assert by_name["cap"].kinds == ("int", "predicted")
    assert [k.op for k in by_name["sym"].checks] == ["symmetric"]
    assert [k.op for k in by_name["bounded"].checks] == [">", "<"]

    assert [(a.kind, [sx(o) for o in a.operands]) for a in by_name["x"].attrs] == [
        (">=", ["0"]),
        ("<=", ["c"]),
    ]
    assert by_name["b"].domain == "binary"
    assert by_name["k"].domain == "integer"
    assert sx(by_name["k"].attrs[1].operands[0]) == "-3"
    assert [(a.kind, [sx(o) for o in a.operands]) for a in by_name["flow"].attrs] == [
        ("box", ["0", "1"])
    ]
    assert by_name["X"].domain == "stiefel"
    assert sx(by_name["X"].index) == "[n, r]"
    assert by_name["x"].domain == "continuous"

    assert sx(by_name["cost"].index) == "{i in I}"
    total = by_name["total"]
    assert total.sense == "minimize"
    assert sx(total.body) == "(sum{i in I} cost[i])"
    assert sx(by_name["cap1"].body) == "(cmp x[i] <= 1)"
    assert sx(by_name["cap2"].body) == "(cmp (sum{i in I} x[i]) >= 1)"


def test_subject_to_and_st_are_the_same() -> None:
    a = parse("subject to c{i in I}: x[i] <= 1;").statements[0]
    b = parse("s.t. c{i in I}: x[i] <= 1;").statements[0]
    assert isinstance(a, ast.Constraint) and isinstance(b, ast.Constraint)
    assert (a.name, sx(a.index), sx(a.body)) == (b.name, sx(b.index), sx(b.body))


def test_maximize() -> None:
    (objective,) = parse("maximize profit: p @ x;").statements
    assert objective.sense == "maximize" and objective.name == "profit"


def test_empty_and_comment_only_models() -> None:
    assert parse("").statements == ()
    assert parse("# nothing here\n   \n# at all").statements == ()
    assert len(parse("var x; # comment at the very end, no newline").statements) == 1


# ---------------------------------------------------------------------- lexical rules
@pytest.mark.parametrize(
    ("text", "value", "kind"),
    [
        ("3", 3, int),
        ("1.5", 1.5, float),
        (".5", 0.5, float),
        ("1e-3", 1e-3, float),
        ("2E+2", 200.0, float),
        ("1.5e3", 1500.0, float),
        ("inf", math.inf, float),
        ("-inf", -math.inf, float),
        ("-2", -2, int),
    ],
)
def test_numbers(text: str, value: float, kind: type) -> None:
    node = body(text)
    assert isinstance(node, ast.Number)
    assert node.value == value and type(node.value) is kind


def test_strings() -> None:
    node = body('{"GARY", "FRA", 3}')
    assert isinstance(node, ast.SetLiteral)
    assert [type(e).__name__ for e in node.elements] == ["String", "String", "Number"]
    assert node.elements[0].value == "GARY"
    assert sx(body('x["GARY", "FRA"]')) == 'x["GARY", "FRA"]'


def test_names_may_contain_keywords() -> None:
    text = "summary + index_set + in_x + sets"
    assert sx(body(text)) == "(+ (+ (+ summary index_set) in_x) sets)"
    (stmt,) = parse("param s;").statements
    assert stmt.name == "s"


def test_transpose_needs_a_word_boundary() -> None:
    assert sx(body("A.T")) == "(T A)"
    with pytest.raises(DflError):
        body("A.Tx")


def test_whitespace_and_newlines_are_insignificant() -> None:
    a = parse("minimize z: sum{i in I} c[i] * x[i];").statements[0]
    b = parse("minimize\n  z :\n\tsum { i\nin I }\n c [ i ]*x[i]\n;").statements[0]
    assert sx(a.body) == sx(b.body)


# ---------------------------------------------------------------------- positions
def test_positions_are_one_based_and_exact() -> None:
    text = "var x;\nminimize z:\n    3 * x + sqrt(y);\n"
    objective = parse(text).statements[1]
    assert (objective.pos.line, objective.pos.column) == (2, 10)  # the name `z`
    plus = objective.body
    assert (plus.pos.line, plus.pos.column, plus.pos.end_column) == (3, 5, 20)
    call = plus.right
    assert isinstance(call, ast.Call)
    assert (call.pos.line, call.pos.column, call.pos.end_column) == (3, 13, 20)  # end exclusive
    assert (call.args[0].pos.line, call.args[0].pos.column) == (3, 18)


def test_every_node_has_a_position() -> None:
    model = parse(MODEL)
    for stmt in model.statements:
        for node in ast.walk(stmt):
            assert node.pos.line >= 1, node


def test_unit_rule_pass_through_keeps_every_position() -> None:
    """The parser hands unit reductions' children on without lark's callbacks: the nodes and
    their spans must be the ones lark's full tree building gives."""
    plain = Lark(grammar_text(), **LARK_OPTIONS)
    expected = _ToAst().transform(plain.parse(MODEL))
    got = parse(MODEL).statements
    pairs = [pair for mine, theirs in zip(got, expected, strict=True)
             for pair in zip(ast.walk(mine), ast.walk(theirs), strict=True)]
    assert len(pairs) > 50
    for a, b in pairs:
        assert type(a) is type(b) and a.pos == b.pos, (a, b)


# ---------------------------------------------------------------------- nesting limits
def test_deep_parentheses_collapse() -> None:
    assert sx(body("(" * 500 + "x" + ")" * 500)) == "x"


@pytest.mark.parametrize(
    "text",
    [
        "(x + " * 500 + "x" + ")" * 500,
        "-" * 500 + "x",
        "x + " * 3000 + "x",
        "x ^ " * 500 + "2",
        "abs(" * 500 + "x" + ")" * 500,
        "x" + "[0]" * 500,
        "x" + ".T" * 500,
        "if a then 1 else " * 500 + "0",
        "{" * 500 + "1" + "}" * 500,
        "sum{i in I} " * 500 + "x[i]",
    ],
    ids=["parens", "neg", "plus", "power", "calls", "subscripts", "transpose", "if", "sets", "sum"],
)
def test_too_deep_nesting_is_a_clean_error(text: str) -> None:
    with pytest.raises(DflError) as info:
        parse(f"var x;\nminimize z: {text};", "m.opt")
    assert "nested too deeply" in info.value.message
    assert info.value.pos.line == 2
    assert str(info.value).startswith("m.opt:2:")


def test_nesting_up_to_the_limit_is_fine() -> None:
    depth_ok = MAX_NESTING - 5
    parse("minimize z: " + "x + " * depth_ok + "x;")


def test_a_byte_order_mark_is_not_a_character_of_the_model() -> None:
    # Notepad and other Windows editors start a UTF-8 file with U+FEFF: it was refused as
    # "unexpected character U+FEFF" at 1:1
    model = parse("\ufeffset I;\nparam c{I};\n", "bom.opt")
    assert [s.name for s in model.statements] == ["I", "c"]
    with pytest.raises(DflError) as info:
        parse("\ufeffset I\nparam c;\n", "bom.opt")
    assert (info.value.pos.line, info.value.pos.column) == (1, 6)


@pytest.mark.parametrize(("literal", "value"), [
    ("9223372036854775807", 9223372036854775807),  # int64's largest stays an int
    ("9223372036854775808", 9.223372036854775808e18),  # beyond it, a float (as numpy reads it)
    ("1" + "0" * 300, 1e300),
    ("1.5e3", 1500.0),
])
def test_integer_literals_beyond_int64_are_floats(literal, value):
    model = parse(f"param a = {literal};")
    number = model.statements[0].value
    assert number.value == value and type(number.value) is type(value)


@pytest.mark.parametrize("literal", ["9" * 320, "1e999", "1.0e309"])
def test_a_literal_too_large_for_a_float_is_a_located_error(literal):
    # 310-digit integers were an internal OverflowError; 1e999 silently became inf
    text = f"param n : int;\nvar x[{literal}];"
    with pytest.raises(DflError, match="too large for a float") as info:
        parse(text, "m.opt")
    assert (info.value.pos.line, info.value.pos.column) == (2, 7)
    assert info.value.hint == "write `inf` for infinity"


# ---------------------------------------------------------------------- AMPL's spellings
@pytest.mark.parametrize(("text", "expected"), [
    ("a = b", "(cmp a == b)"),
    ("a <> b", "(cmp a != b)"),
    ("a = b and c <> d", "(and (cmp a == b) (cmp c != d))"),
    ("A cross B", "(cross A B)"),
    ("A cross B union C", "(union (cross A B) C)"),  # `cross` binds tighter than `union`
    ("A inter B cross C", "(inter A (cross B C))"),
    ("A symdiff B inter C", "(symdiff A (inter B C))"),
    ("setof{(i, j) in A} (j, i)", "(setof{(i, j) in A} (j, i))"),
    ("setof{i in I : i > 1} i", "(setof{i in I : (cmp i > 1)} i)"),
    ("(j, i) in PAIRS", "(in (j, i) PAIRS)"),
    ("next(t, T, 2)", "next(t, T, 2)"),
    ("S[i]", "S[i]"),
    # a set built from an index is `setof` of its dummies; a literal stays a literal
    ("{i in I : a[i] > 0}", "(setof{i in I : (cmp a[i] > 0)} i)"),
    ("{(i, j) in A, t in T}", "(setof{(i, j) in A, t in T} (i, j, t))"),
    ('{1, "a"}', '{1, "a"}'),
    ("-Infinity + Infinity", "(+ -inf inf)"),  # AMPL's word for inf
    ("p not in S", "(not (in p S))"),
    # an `if` may close a comparison without parentheses, its `else` chaining further `if`s
    ("f = if k = o then 1 else if k = d then -1 else 0",
     "(cmp f == (if (cmp k == o) 1 (if (cmp k == d) -1 0)))"),
    ("a <= b <= if c then 1 else 2", "(cmp a <= b <= (if c 1 2))"),
    ("+Infinity - +x", "(- inf x)"),  # a unary `+`
    ("0. + 2.", "(+ 0.0 2.0)"),  # a number ending in `.`, while `1..n` stays a range
    ("1..n", "(.. 1 n)"),
    # a function of a set, the braces without parentheses: `{I}` is the set I itself
    ("card {i in I: a[i] > 0}", "card((setof{i in I : (cmp a[i] > 0)} i))"),
    ("card {I} / 2", "(/ card(I) 2)"),
])
def test_ampl_expression_forms(text, expected) -> None:
    assert sx(body(text)) == expected


def test_param_attributes_separated_by_commas_in_any_order() -> None:
    (decl,) = parse("param p{I} integer, > 0, default 1;").statements
    assert decl.kinds == ("int",) and [c.op for c in decl.checks] == [">"]
    assert sx(decl.default) == "1"
    (decl,) = parse("param t symbolic in NODES, <> s;").statements
    assert decl.kinds == ("symbolic",) and [c.op for c in decl.checks] == ["in", "!="]
    assert decl.is_element
    (decl,) = parse("param c : int, predicted >= 0;").statements  # this language's `:` kinds
    assert decl.kinds == ("int", "predicted") and [c.op for c in decl.checks] == [">="]
    (decl,) = parse("param b{I} binary default 0;").statements
    assert decl.kinds == ("binary",) and sx(decl.default) == "0"


def test_a_param_value_ends_at_a_comma() -> None:
    """`default a > b` is a comparison, so another attribute after a value needs the comma."""
    (decl,) = parse("param p default 2, >= 0;").statements
    assert sx(decl.default) == "2" and [c.op for c in decl.checks] == [">="]
    with pytest.raises(DflError, match="a value .* or a `default` twice"):
        parse("param p = 1, default 2;")


def test_ampl_colon_equals_is_a_value_the_data_may_replace() -> None:
    (p, s) = parse("param t{I} := 2 * n;\nset J := 1..3;").statements
    assert p.value is None and sx(p.default) == "(* 2 n)"
    assert s.value is None and sx(s.default) == "(.. 1 3)"


def test_ampl_statement_forms_from_published_models() -> None:
    """Spellings found in published AMPL models: an empty statement, a param `within` a set,
    an `if` as a bound without parentheses, an indexed objective, a constraint without
    `subject to`, an alias text after a declaration's name."""
    aliased = parse("set W 'warehouses';\nparam p 'price' {W} >= 0;\nvar U 'used' >= 0;\n"
                    "minimize c 'cost': U;").statements
    assert [d.name for d in aliased] == ["W", "p", "U", "c"] and sx(aliased[1].index) == "{W}"
    p, x, o = parse("param P symbolic within PROD;;\n"
                    "var x{j in J} >= if t[j] = 'pos' then 0 else -Infinity, "
                    "<= if t[j] = 'neg' then 0 else +Infinity;\n"
                    "minimize cost {s in S}: sum{j in J} c[s, j] * x[j];").statements
    assert [c.op for c in p.checks] == ["in"] and sx(p.checks[0].operand) == "PROD"
    assert [sx(a.operands[0]) for a in x.attrs] == ['(if (cmp t[j] == "pos") 0 -inf)',
                                                     '(if (cmp t[j] == "neg") 0 inf)']
    assert sx(o.index) == "{s in S}" and o.name == "cost"
    bare, named = parse("def_S {i in I}: S[i] = 2;\nsubj to cap 'capacity': x <= 1;").statements
    assert (bare.name, sx(bare.index), named.name) == ("def_S", "{i in I}", "cap")
    (q,) = parse("param q{i in I} >= if i = 1 then 0 else q[i - 1];").statements
    assert sx(q.checks[0].operand) == "(if (cmp i == 1) 0 q[(- i 1)])"


def test_var_attributes_separated_by_commas() -> None:
    (decl,) = parse("var x{J} >= 0, <= 10, integer;").statements
    assert [a.kind for a in decl.attrs] == [">=", "<=", "integer"] and decl.domain == "integer"


def test_set_declarations() -> None:
    s, = parse("set S{i in I} within T ordered;").statements
    assert sx(s.index) == "{i in I}" and sx(s.within) == "T" and s.order == "ordered"
    s, = parse("set R circular, = 1..4;").statements
    assert s.order == "circular" and sx(s.value) == "(.. 1 4)"
    s, = parse("set ARCS dimen 2;").statements
    assert s.dimen == 2
    with pytest.raises(DflError, match="repeats `within`"):
        parse("set S within A within B;")
    with pytest.raises(DflError, match="`dimen` takes a whole number"):
        parse("set S dimen 0;")
    s, = parse("set S{I} default {};").statements
    assert sx(s.default) == "{}"
    with pytest.raises(DflError, match="a `default` has nothing to fill"):
        parse("set S = {1}, default {2};")


@pytest.mark.parametrize("start", ["subject to", "subj to", "s.t."])
def test_constraint_openers(start) -> None:
    (c,) = parse(f"{start} c: x = 1;").statements
    assert isinstance(c, ast.Constraint) and sx(c.body) == "(cmp x == 1)"


def test_check_statements() -> None:
    named, anonymous = parse("check positive{i in I}: a[i] >= 0;\ncheck: n > 0;").statements
    assert isinstance(named, ast.Check) and named.name == "positive"
    assert sx(named.index) == "{i in I}" and named.title == "check `positive`"
    assert anonymous.index is None and anonymous.title == "the check on line 2"


def test_a_set_from_an_index_binds_every_item() -> None:
    with pytest.raises(DflError, match="binds every item") as info:
        parse("set P = {1, i in I};")
    assert info.value.pos.column == 10


def test_an_index_binds_names_only() -> None:
    with pytest.raises(DflError, match="an index binds names here") as info:
        parse("minimize z: sum{a[i] in I} 1;")
    assert (info.value.pos.line, info.value.pos.column) == (1, 17)


# ---------------------------------------------------------------------- AMPL's spellings
def test_block_comments_span_lines_and_keep_positions() -> None:
    var, objective = parse("/* a model\n   over two lines */ var x;\n"
                           "minimize /* inline */ z: x; /**/").statements
    assert var.name == "x" and (var.pos.line, var.pos.column) == (2, 26)
    assert objective.name == "z"
    assert parse("/* only a comment */").statements == ()


def test_a_comment_hides_what_would_otherwise_be_an_error() -> None:
    (var,) = parse('var x; /* an "unclosed string, a { and a ; */').statements
    assert var.name == "x"


@pytest.mark.parametrize(("text", "value"), [
    ("'GARY'", "GARY"), ('"GARY"', "GARY"), ("'O''Hare'", "O'Hare"), ('"say ""hi"""', 'say "hi"'),
    ("'a \"b\"'", 'a "b"'),
])
def test_strings_in_single_or_double_quotes(text, value) -> None:
    string = body(text)
    assert isinstance(string, ast.String) and string.value == value


def test_double_star_is_power() -> None:
    assert sx(body("x**2")) == sx(body("x^2")) == "(^ x 2)"
    assert sx(body("2**3**2")) == "(^ 2 (^ 3 2))"  # right-associative, as `^`
    assert sx(body("-x**2 * 3")) == "(* (- (^ x 2)) 3)"


def test_if_without_else_is_else_zero() -> None:
    tree = body("if a then 1")
    assert sx(tree) == "(if a 1 0)"
    assert (tree.orelse.pos.line, tree.orelse.pos.column) == (tree.then.pos.end_line,
                                                               tree.then.pos.end_column)


@pytest.mark.parametrize(("text", "tree"), [
    # an `else` belongs to the nearest `if`, as in AMPL
    ("if a then if b then 1 else 2", "(if a (if b 1 2) 0)"),
    ("if a then (if b then 1) else 2", "(if a (if b 1 0) 2)"),
    ("if a then if b then 1 else 2 else 3", "(if a (if b 1 2) 3)"),
    ("if a then 1 else if b then 2", "(if a 1 (if b 2 0))"),
    ("(if a then x) + 1", "(+ (if a x 0) 1)"),
])
def test_else_belongs_to_the_nearest_if(text, tree) -> None:
    assert sx(body(text)) == tree


def test_an_if_closing_a_comparison_keeps_its_else() -> None:
    # inside an expression, an `else` after it would belong to it: there it needs its `else`
    with pytest.raises(DflError, match="expected `else`") as info:
        parse("s.t. c: (x = if a then 1) or y;")
    assert info.value.pos.column == 25


@pytest.mark.parametrize(("text", "tree"), [
    # AMPL's `x >= if c then e;` closing a constraint or a check: `else 0` (the book's egypt
    # model); it was a syntax error, "expected `else`"
    ("s.t. c: x = if a then 1;", "(cmp x == (if a 1 0))"),
    ("s.t. c: 0 <= x <= if a then b + 1;", "(cmp 0 <= x <= (if a (+ b 1) 0))"),
    ("s.t. c: x <= if a then if b then 1 else 2;",
     "(cmp x <= (if a (if b 1 2) 0))"),
    ("check: n >= if a then sum{i in I} p[i];", "(cmp n >= (if a (sum{i in I} p[i]) 0))"),
])
def test_an_if_closing_a_statement_may_leave_out_its_else(text, tree) -> None:
    statement = parse(text).statements[0]
    assert sx(getattr(statement, "body", None) or statement.cond) == tree


@pytest.mark.parametrize(("text", "tree"), [
    ("a + b mod 2", "(+ a (mod b 2))"),
    ("a * b mod c div d", "(div (mod (* a b) c) d)"),  # one level with `*` `/`, left to right
    ("-a mod 2", "(mod (- a) 2)"),
    ("i mod 2 = 1", "(cmp (mod i 2) == 1)"),
    ("1 .. n div 2", "(.. 1 (div n 2))"),
])
def test_mod_and_div_multiply(text, tree) -> None:
    assert sx(body(text)) == tree


@pytest.mark.parametrize("word", ["mod", "div", "less"])
def test_mod_and_div_are_reserved(word) -> None:
    with pytest.raises(DflError, match=f"`{word}` is a reserved word"):
        parse(f"param {word};")


@pytest.mark.parametrize(("text", "lo", "hi", "step"), [
    ("1 .. 9 by 2", "1", "9", "2"),
    ("a + 1 .. n - 1 by k * 2", "(+ a 1)", "(- n 1)", "(* k 2)"),
    ("10 .. 1 by -3", "10", "1", "-3"),
])
def test_ranges_take_a_step(text, lo, hi, step) -> None:
    tree = body(text)
    assert isinstance(tree, ast.Range)
    assert (sx(tree.lo), sx(tree.hi), sx(tree.step)) == (lo, hi, step)
    assert body("1 .. 9").step is None


def test_prod_is_a_reduction() -> None:
    assert sx(body("2 * prod{i in I} p[i] * q[i] + 1")) == (
        "(+ (* 2 (prod{i in I} (* p[i] q[i]))) 1)")


def test_prod_is_a_name_where_no_brace_follows() -> None:
    # AMPL doesn't reserve `prod` (the book's bigprod names a set `prod`): it was refused as a
    # reserved word; it is the iterated product only before `{`
    model = parse("set prod; param pt {prod} > 0; param n{p in prod} = prod{q in prod} pt[q];"
                  "minimize z: sum {p in prod} pt[p] * prod(x);")
    assert [s.name for s in model.statements[:3]] == ["prod", "pt", "n"]
    assert sx(model.statements[2].value) == "(prod{q in prod} pt[q])"
    assert sx(model.statements[3].body) == "(sum{p in prod} (* pt[p] prod(x)))"


@pytest.mark.parametrize(("text", "tree"), [
    # AMPL's `a less b` is max(a - b, 0), at the level of `+` and `-`
    ("a less b", "pos((- a b))"),
    ("a + b less c * d", "pos((- (+ a b) (* c d)))"),
    ("a less sum{i in I} b[i] - 1", "(- pos((- a (sum{i in I} b[i]))) 1)"),
])
def test_less_is_the_positive_part_of_a_difference(text, tree) -> None:
    assert sx(body(text)) == tree


def _cond(text: str) -> ast.Expr:
    return parse(f"param p = if {text} then 1;").statements[0].value.cond


@pytest.mark.parametrize(("text", "tree"), [
    # `exists{I} c`: the members of I where c holds, counted; `forall`: where it fails, none
    ("exists{i in I} a[i] > 0", "(cmp (sum{i in I} (if (cmp a[i] > 0) 1 0)) > 0)"),
    ("forall{i in I} b", "(cmp (sum{i in I} (if b 0 1)) == 0)"),
    # the body runs up to the next `or`, past `and`, as in AMPL
    ("exists{i in I} a and b or c", "(or (cmp (sum{i in I} (if (and a b) 1 0)) > 0) c)"),
    ("a and exists{i in I} b and c", "(and a (cmp (sum{i in I} (if (and b c) 1 0)) > 0))"),
    ("not exists{i in I} b", "(not (cmp (sum{i in I} (if b 1 0)) > 0))"),
    ("a and not forall{i in I} b", "(and a (not (cmp (sum{i in I} (if b 0 1)) == 0)))"),
    ("forall{i in I} exists{j in J} c", "(cmp (sum{i in I} (if (cmp (sum{j in J} (if c 1 0)) > 0)"
                                        " 0 1)) == 0)"),
])
def test_exists_and_forall(text, tree) -> None:
    assert sx(_cond(text)) == tree


def test_exists_inside_arithmetic_needs_parentheses() -> None:
    with pytest.raises(DflError, match="`exists` can't appear here without parentheses") as info:
        parse("param p = a + exists{i in I} b;")
    assert info.value.pos.column == 15 and "(exists{...} ...)" in info.value.hint


@pytest.mark.parametrize(("text", "start"), [
    ("var x := 1;", "1"),
    ("var x{i in I} >= 0, := p[i] * 2, <= 5;", "(* p[i] 2)"),
    ("var x{i in I} binary := if i == 1 then 1 else 0;", "(if (cmp i == 1) 1 0)"),
])
def test_variables_take_an_initial_value(text, start) -> None:
    (var,) = parse(text).statements
    (init,) = [a for a in var.attrs if a.kind == "init"]
    assert sx(init.operands[0]) == start


def test_ordered_by() -> None:
    s, = parse("set B ordered by A, within C;").statements
    assert sx(s.ordered_by) == "A" and sx(s.within) == "C" and s.order == ""
    s, = parse("set B ordered by A * T;").statements
    assert sx(s.ordered_by) == "(* A T)"
    with pytest.raises(DflError, match="repeats `ordered by`"):
        parse("set B ordered by A ordered by C;")


def test_a_comma_may_come_before_the_first_attribute() -> None:
    # MathProg (GLPK's AMPL subset) writes `param m, integer, > 0;`: it was "unexpected `,`"
    plain = parse("set I ordered; param n integer > 0; param c{i in I} >= 0; var x{i in I} >= 0;")
    comma = parse("set I, ordered; param n, integer, > 0; param c{i in I}, >= 0; "
                  "var x{i in I}, >= 0;")
    assert [repr(s) for s in comma.statements] == [repr(s) for s in plain.statements]
