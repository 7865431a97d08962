"""The static checker: symbols, shapes, and the DCP facts (curvature, sign, degrees) it records
for each expression, on small models."""

from __future__ import annotations

import re

import pytest

import dfl_dsl as dfl
from dfl_dsl.check import Curv, Info, Sign
from dfl_dsl.check.symbols import Indexed, SetSymbol

DECLS = """\
set I;
set P within I * I;
param n : int;
param m : int;
param a;
param w >= 0;
param neg <= 0;
param A[m, n];
param S[n, n] psd;
param Q[n, n];
param p : predicted;
param u : uncertain;
var x;
var y >= 0;
var v[n];
var z{I} >= 0;
"""


def info(expr: str, decls: str = DECLS) -> Info:
    """What the checker knows about `expr` (declared as a scalar macro)."""
    model = dfl.parse(decls + f"expr e = {expr};\n", "m.opt")
    symbol = model.symbols["e"]
    assert isinstance(symbol, Indexed)
    return symbol.element.but(shape=symbol.shape)


# ---------------------------------------------------------------------- curvature (DCP)
@pytest.mark.parametrize(
    ("expr", "curv"),
    [
        ("3", Curv.CONST),
        ("a * w + 1", Curv.CONST),
        ("x", Curv.AFFINE),
        ("2 * x - 3 * y + a", Curv.AFFINE),
        ("a * x", Curv.AFFINE),
        ("x / 2", Curv.AFFINE),
        ("sum{i in I} z[i]", Curv.AFFINE),
        ("sum(v)", Curv.AFFINE),
        ("A @ v", Curv.AFFINE),
        ("if a >= 0 then x else y", Curv.AFFINE),
        ("x^2", Curv.CONVEX),
        ("(x - 1)^2", Curv.CONVEX),
        ("-x^2", Curv.CONCAVE),
        ("y^3", Curv.CONVEX),
        ("x^3", Curv.UNKNOWN),  # odd power of an expression of unknown sign
        ("y^0.5", Curv.CONCAVE),
        ("x^1", Curv.AFFINE),
        ("abs(x)^2", Curv.CONVEX),
        ("sqrt(y)^2", Curv.UNKNOWN),
        ("sqrt(y)", Curv.CONCAVE),
        ("-sqrt(y)", Curv.CONVEX),
        ("sqrt(x^2)", Curv.UNKNOWN),
        ("log(y)", Curv.CONCAVE),
        ("log1p(y)", Curv.CONCAVE),
        ("exp(x)", Curv.CONVEX),
        ("exp(x^2)", Curv.CONVEX),
        ("exp(-x^2)", Curv.UNKNOWN),
        ("abs(x)", Curv.CONVEX),
        ("pos(x - 1)", Curv.CONVEX),
        ("abs(x) + x^2", Curv.CONVEX),
        ("abs(x) - sqrt(y)", Curv.CONVEX),
        ("abs(x) + sqrt(y)", Curv.UNKNOWN),
        ("max(x, y)", Curv.CONVEX),
        ("min(x, 3)", Curv.CONCAVE),
        ("max{i in I} z[i]", Curv.CONVEX),
        ("min{i in I} z[i]", Curv.CONCAVE),
        ("sum{i in I} z[i]^2", Curv.CONVEX),
        ("sum{i in I} sqrt(z[i])", Curv.CONCAVE),
        ("norm1(v)", Curv.CONVEX),
        ("norm2(A @ v)", Curv.CONVEX),
        ("norm_inf(v)", Curv.CONVEX),
        ("sum_squares(A @ v - 1)", Curv.CONVEX),
        ("quad_form(v, S)", Curv.CONVEX),
        ("quad_form(v, Q)", Curv.UNKNOWN),  # Q is not declared psd
        ("w * x^2", Curv.CONVEX),
        ("neg * x^2", Curv.CONCAVE),
        ("a * x^2", Curv.UNKNOWN),  # a scale of unknown sign
        ("x * x", Curv.UNKNOWN),
        ("x * y", Curv.UNKNOWN),
        ("sqrt(y) / 2", Curv.CONCAVE),
        ("-2 * sqrt(y)", Curv.CONVEX),
        ("mean(u * x)", Curv.AFFINE),
        ("cvar(0.9, u * x)", Curv.CONVEX),
        ("worst(u * x)", Curv.CONVEX),
        ("p * x", Curv.AFFINE),
    ],
)
def test_curvature(expr: str, curv: Curv) -> None:
    assert info(expr).curv is curv


# ---------------------------------------------------------------------- sign
@pytest.mark.parametrize(
    ("expr", "sign"),
    [
        ("3", Sign.NONNEG),
        ("0", Sign.ZERO),
        ("-2", Sign.NONPOS),
        ("a", Sign.UNKNOWN),
        ("w", Sign.NONNEG),
        ("neg", Sign.NONPOS),
        ("x", Sign.UNKNOWN),
        ("y", Sign.NONNEG),
        ("-y", Sign.NONPOS),
        ("y + 1", Sign.NONNEG),
        ("-(y + w)", Sign.NONPOS),
        ("x - y", Sign.UNKNOWN),
        ("y - neg", Sign.NONNEG),
        ("2 * y", Sign.NONNEG),
        ("neg * y", Sign.NONPOS),
        ("neg * neg", Sign.NONNEG),
        ("x^2", Sign.NONNEG),
        ("abs(x)", Sign.NONNEG),
        ("exp(x)", Sign.NONNEG),
        ("sqrt(y)", Sign.NONNEG),
        ("norm2(v)", Sign.NONNEG),
        ("sum_squares(v)", Sign.NONNEG),
        ("quad_form(v, S)", Sign.NONNEG),
        ("log1p(y)", Sign.NONNEG),
        ("log(y)", Sign.UNKNOWN),
        ("max(x, y)", Sign.NONNEG),
        ("min(x, neg)", Sign.NONPOS),
        ("sum{i in I} z[i]", Sign.NONNEG),
        ("if a >= 0 then y else w", Sign.NONNEG),
        ("if a >= 0 then y else x", Sign.UNKNOWN),
    ],
)
def test_sign(expr: str, sign: Sign) -> None:
    assert info(expr).sign is sign


# ---------------------------------------------------------------------- degrees
@pytest.mark.parametrize(
    ("expr", "vdeg", "pdeg", "udeg"),
    [
        ("a", 0, 0, 0),
        ("x", 1, 0, 0),
        ("x + y", 1, 0, 0),
        ("x^2", 2, 0, 0),
        ("x * y", 2, 0, 0),
        ("quad_form(v, S)", 2, 0, 0),
        ("sum_squares(v)", 2, 0, 0),
        ("x^3", None, 0, 0),
        ("abs(x)", None, 0, 0),
        ("sqrt(y)", None, 0, 0),
        ("p", 0, 1, 0),
        ("p * x", 1, 1, 0),
        ("x + p", 1, 1, 0),
        ("u * x", 1, 0, 1),
        ("mean(u * x)", 1, 0, 0),
        ("cvar(0.9, u * x)", None, 0, 0),
    ],
)
def test_degrees(expr: str, vdeg: int | None, pdeg: int, udeg: int) -> None:
    got = info(expr)
    assert (got.vdeg, got.pdeg, got.udeg) == (vdeg, pdeg, udeg)


@pytest.mark.parametrize(
    ("expr", "nonsmooth", "pwl"),
    [
        ("x + y", False, True),
        ("abs(x)", True, True),
        ("max(x, y) + 2 * x", True, True),
        ("norm1(v)", True, True),
        ("norm2(v)", True, False),
        ("x^2", False, False),
        ("exp(x)", False, False),
    ],
)
def test_smoothness(expr: str, nonsmooth: bool, pwl: bool) -> None:
    got = info(expr)
    assert (got.nonsmooth, got.pwl) == (nonsmooth, pwl)


# ---------------------------------------------------------------------- shapes
@pytest.mark.parametrize(
    ("expr", "shape"),
    [
        ("x", ()),
        ("v", ("n",)),
        ("A", ("m", "n")),
        ("A.T", ("n", "m")),
        ("A @ v", ("m",)),
        ("A.T @ A", ("n", "n")),
        ("v.T @ S @ v", ()),
        ("v + 1", ("n",)),
        ("2 * v", ("n",)),
        ("v[0 .. 2]", (3,)),
        ("v[0]", ()),
        ("A[0]", ("n",)),
        ("sum(v)", ()),
        ("norm2(v)", ()),
        ("eye(3)", (3, 3)),
        ("ones(n)", ("n",)),
        ("zeros(4) + 1", (4,)),
        ("diag(v)", ("n", "n")),
        ("diag(S)", ("n",)),
        ("trace(S)", ()),
        ("z", ("#I",)),
    ],
)
def test_shapes(expr: str, shape: tuple) -> None:
    assert info(expr).shape == shape


def test_array_valued_expr_keeps_its_shape() -> None:
    model = dfl.parse(
        DECLS + "expr r = A @ v - 1;\nminimize fit: sum_squares(r) + norm1(r[0 .. 1]);\n"
    )
    assert model.symbols["r"].shape == ("m",)
    assert model.klass.name == "QP"  # the norm1 term's epigraph leaves a QP
    with pytest.raises(dfl.DflError, match="scalar"):
        dfl.parse(DECLS + "expr r = A @ v;\nminimize fit: r;\n")


# ---------------------------------------------------------------------- symbols
def test_symbols_and_arity() -> None:
    model = dfl.parse(
        DECLS
        + "param c{I, I};\nparam g{P};\nparam h{(i, j) in P};\n"
        + "expr e2{i in I} = 2 * z[i];\n"
        + "minimize obj: sum{i in I} e2[i];\n"
        + "s.t. c1{(i, j) in P}: z[i] <= z[j];\n"
    )
    sets = {s.name: s for s in model.sets}
    assert isinstance(sets["I"], SetSymbol) and sets["I"].dim == 1
    assert sets["P"].dim == 2
    params = {p.name: p for p in model.params}
    assert params["c"].arity == 2 and params["c"].shape == ("#I", "#I")
    assert params["g"].arity == 2  # one pair = two subscripts
    assert params["h"].arity == 2
    assert params["A"].arity == 2 and params["A"].shape_style
    assert params["p"].element.pdeg == 1 and params["u"].element.udeg == 1
    assert params["w"].element.sign is Sign.NONNEG
    variables = {v.name: v for v in model.variables}
    assert set(variables) == {"x", "y", "v", "z"}
    assert variables["y"].element.sign is Sign.NONNEG
    assert model.symbols["e2"].kind == "expr" and model.symbols["e2"].arity == 1
    assert model.objective is not None and model.objective.name == "obj"
    assert [c.name for c in model.constraints] == ["c1"]
    assert dfl.parse("model demo;\nvar x;\n").name == "demo"


def test_tuple_pattern_with_a_bound_component_is_a_filter() -> None:
    model = dfl.parse(
        "set NODES;\nset ARCS within NODES * NODES;\nvar f{ARCS} >= 0;\n"
        "s.t. bal{v in NODES}: sum{(i, v) in ARCS} f[i, v] == sum{(v, j) in ARCS} f[v, j];\n"
    )
    assert model.klass.name == "LP"


def test_int_param_as_shape_and_range() -> None:
    model = dfl.parse(
        "param T : int;\nset H = 1..T;\nparam d{H} : int >= 1;\nvar x{H} >= 0;\n"
        "s.t. c{t in H}: sum{u in t .. t + d[t] - 1 : u <= T} x[u] <= 1;\n"
    )
    assert model.symbols["H"].integer


def test_element_param_in_a_condition() -> None:
    model = dfl.parse(
        "set ITEMS;\nset GROUPS;\nparam group{ITEMS} in GROUPS;\nvar x{ITEMS} binary;\n"
        "s.t. per{g in GROUPS}: sum{i in ITEMS: group[i] == g} x[i] <= 1;\n"
    )
    assert model.symbols["group"].element.kind == "elem"


def test_predicted_param_enters_linearly() -> None:
    for ok in ("p * x", "x * p", "2 * p * x", "p * x + p", "sum{i in I} p * z[i]"):
        dfl.parse(DECLS + f"minimize o: {ok};\n")
    for ok_constraint in ("p * x <= 1", "x <= p", "x + p * y >= a", "x^2 <= p"):
        dfl.parse(DECLS + f"s.t. c: {ok_constraint};\n")


def test_uncertain_param_inside_a_scaled_or_reduced_atom() -> None:
    # data scaling an atom that holds an uncertain param multiplies no param by anything, and
    # a `max{}` over one is bridged scenario by scenario, like `max(a, b)`
    for ok in ("w * pos(u - y)", "pos(u - y) * w", "cvar(0.9, y + w * pos(u - y))",
               "max{i in I} (u - z[i])"):
        dfl.parse(DECLS + f"minimize o: {ok};\n")


@pytest.mark.parametrize(("expr", "message"), [
    ("(x - u)^2", "an uncertain param enters `^` nonlinearly"),
    ("(x - p)^2", "a predicted param enters `^` nonlinearly"),
    ("u * pos(x)", "an uncertain param multiplies a nonlinear expression"),
    ("pos(x) * p", "a predicted param multiplies a nonlinear expression"),
    ("max{i in I} (p - z[i])", "a predicted param enters `max{...}` nonlinearly"),
])
def test_a_param_entering_nonlinearly_is_named_by_its_kind(expr: str, message: str) -> None:
    with pytest.raises(dfl.DflError, match=re.escape(message)):
        dfl.parse(DECLS + f"minimize o: {expr};\n")


def test_prod_takes_data() -> None:
    assert info("prod{i in I} w").sign is Sign.NONNEG and info("prod{i in I} w").is_data
    assert info("prod{i in I} a").sign is Sign.UNKNOWN
    for expr, column in (("prod{i in I} z[i]", 26), ("prod{i in I} (p + 1)", 27)):
        with pytest.raises(dfl.DflError, match=r"`prod\{\.\.\.\}` takes data") as err:
            dfl.parse(DECLS + f"minimize o: {expr};\n")
        assert err.value.pos.column == column


@pytest.mark.parametrize(("text", "message", "column"), [
    ("set S = 1..9 by 0;", "a range's step must not be 0", 17),
    ("set S = 1..9 by 0.5;", "a range's step must be an integer, got 0.5", 17),
    ("var y; set S = 1..9 by y;", "a range's steps must be integer data", 24),
    ("param A[5]; param b = sum(A[0..4 by 2]);", "a slice takes no `by` step", 37),
])
def test_range_steps(text: str, message: str, column: int) -> None:
    with pytest.raises(dfl.DflError) as info:
        dfl.parse(text)
    assert message in info.value.message and info.value.pos.column == column


@pytest.mark.parametrize(("expr", "sign", "integer"), [
    ("n mod 2", Sign.UNKNOWN, True),
    ("w mod 2", Sign.NONNEG, False),   # the remainder has the dividend's sign
    ("neg div w", Sign.NONPOS, False),
    ("n div m", Sign.UNKNOWN, True),
])
def test_mod_and_div_of_data(expr: str, sign: Sign, integer: bool) -> None:
    got = info(expr)
    assert got.is_data and got.sign is sign and got.integer is integer


@pytest.mark.parametrize(("expr", "column"), [("x mod 2", 13), ("a div p", 19),
                                              ("sum{i in I} 2 mod z[i]", 31)])
def test_mod_and_div_take_data(expr: str, column: int) -> None:
    with pytest.raises(dfl.DflError, match="takes data, not variables") as info:
        dfl.parse(DECLS + f"minimize o: {expr};\n")
    assert info.value.pos.column == column


GRAPH = ("set N;\nset A within N * N;\nparam s in N;\nparam w{A};\nvar f{A} >= 0;\n"
         "var y{N};\n")


@pytest.mark.parametrize("text", [
    "s.t. c: sum{(s, j) in A} f[s, j] == 1;",
    's.t. c: sum{("a", j) in A} f["a", j] == 1;',
    "s.t. c{i in N}: sum{(j, i) in A : (i, j) in A} f[j, i] <= 1;",
    "s.t. c: sum{j in N, (j, k) in A, (k, s) in A} f[k, s] <= 1;",
    "s.t. c{(s, j) in A}: f[s, j] <= 1;",  # a constraint's rows: keyed by j
])
def test_tuple_components_that_match(text: str) -> None:
    assert dfl.parse(GRAPH + text).klass.name == "LP"


@pytest.mark.parametrize(("text", "message", "col"), [
    ("var g{(s, j) in A};",
     "a declaration's index binds a new dummy in every tuple component", 8),
    ("set R{(s, j) in A};", "a declaration's index binds a new dummy in every tuple "
     "component", 8),
    ("s.t. c: sum{(y, j) in A} 1 >= 0;", "dummy `y` hides the var `y`", 14),
    ('s.t. c: sum{(y["a"], j) in A} 1 >= 0;', "must be one element from data", 14),
    ("s.t. c: sum{(i, j) in A : (i, j, i) in A} f[i, j] >= 0;",
     "the set holds 2-tuples, tested here with 3-tuples", 27),
    ("s.t. c: sum{(i, j) in A : (i, f[i, j]) in A} f[i, j] >= 0;",
     "`in` tests data, not variables", 31),
    ("s.t. c: (1, 2) >= 0;", "a tuple `(a, b)` can't be used here", 9),
])
def test_misused_tuples_are_located(text: str, message: str, col: int) -> None:
    with pytest.raises(dfl.DflError, match=re.escape(message)) as info:
        dfl.parse(GRAPH + text)
    assert (info.value.pos.line, info.value.pos.column) == (7, col)


OBJECTIVES = ("set S;\nparam mu{S};\nvar x{S} in [0, 1];\n"
              "maximize gain: sum{i in S} mu[i] * x[i];\n"
              "minimize spread: sum{i in S} x[i]^2;\n"
              "minimize bad: -sum{i in S} x[i]^2;\n")


def test_the_first_objective_is_solved_unless_another_is_named() -> None:
    model = dfl.parse(OBJECTIVES)
    assert [o.name for o in model.objectives] == ["gain", "spread", "bad"]
    assert model.objective.name == "gain" and model.klass.name == "LP"
    spread = dfl.parse(OBJECTIVES, objective="spread")
    assert spread.objective.name == "spread" and spread.klass.name == "QP"
    assert model.select("spread").klass.name == "QP" and model.select("gain") is model


def test_only_the_objective_solved_must_be_convex() -> None:
    with pytest.raises(dfl.DflError, match="objective is not convex") as info:
        dfl.parse(OBJECTIVES, objective="bad")
    assert info.value.pos.line == 6


def test_every_objective_is_checked_for_names() -> None:
    with pytest.raises(dfl.DflError, match="unknown name `y`") as info:
        dfl.parse(OBJECTIVES + "minimize other: y;\n")
    assert info.value.pos.line == 7


def test_an_unknown_objective_name_lists_the_model_s_objectives() -> None:
    with pytest.raises(dfl.DflError, match=re.escape(
            "no objective `sprad` (its objectives: `gain`, `spread`, `bad`)")) as info:
        dfl.parse(OBJECTIVES, objective="sprad")
    assert info.value.hint == "did you mean `spread`?"


@pytest.mark.parametrize(("text", "message"), [
    ("var x; s.t. c: 0 <= x <> 1;", "`<>` can't be a constraint in a chain"),
    ("var x; s.t. c: 0 <= x = 1;", "mixed-direction chained comparison `<=` ... `=`"),
    ("var x; s.t. c: abs(x) = 1;", "(left side of `=`)"),
])
def test_constraint_messages_keep_ampl_spellings(text, message):
    with pytest.raises(dfl.DflError) as info:
        dfl.parse(text)
    assert message in info.value.message
