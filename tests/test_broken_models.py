"""Broken models: each error is reported on the line (and column) of the mistake, with a
message that names it and, where one helps, a hint ("did you mean `weight`?").

Each case is (id, model text, line, column or None, message substring, hint substring or None).
"""

from __future__ import annotations

import pytest

import dfl_dsl as dfl
from dfl_dsl.errors import WINDOW

# fmt: off
CASES = [
("missing_semicolon",
 "set I;\nparam c{I} >= 0\nvar x{I} >= 0;\nminimize z: sum{i in I} c[i] * x[i];\n",
 2, 16, "missing `;` after `0`", "every statement ends with `;`"),
("missing_semicolon_before_constraint",
 "var x;\nminimize z: x\n\ns.t. c: x >= 0;\n",
 2, 14, "missing `;` after `x`", None),
("missing_semicolon_same_line",
 "var x minimize z: x;\n", 1, 6, "missing `;`", None),
("missing_semicolon_at_eof",
 "var x;\nminimize z: x;\ns.t. c: x >= 0\n# the end\n", 3, 15, "missing `;` after `0`", None),
("unclosed_brace",
 "set I;\nparam c{I;\nvar x{I} >= 0;\n", 2, 8, "unclosed `{`", "add the matching `}`"),
("unclosed_bracket",
 "set I;\nvar x{I};\nminimize z: sum{i in I} x[i;\n", 3, 26, "unclosed `[`", "`]`"),
("unclosed_paren",
 "var x;\nminimize z:\n    3 * (x + 1;\ns.t. c: x >= 0;\n", 3, 9, "unclosed `(`", "`)`"),
("unclosed_paren_at_eof",
 "var x;\nminimize z: sqrt(x\n", 2, 17, "unclosed `(`", None),
("mismatched_bracket",
 "set I;\nvar x{I};\nminimize z: sum{i in I} x[i);\n", 3, 26, "`[` opened here is closed by `)`",
 "close it with `]`"),
("stray_closer",
 "var x;\nminimize z: x);\n", 2, 14, "`)` closes nothing", "remove it"),
("stray_character",
 "set I;\nparam c{I} $ 3;\n", 2, 12, "unexpected character `$`", None),
("single_quote_unterminated",
 "set I = {'a};\n", 1, 10, "unterminated string", "close it with `'`"),
("ampl_let_after_solve",
 "var x >= 1;\nminimize z: x;\nsolve;\ndisplay x;\nlet x := 3;\n", 5, 1,
 "`let` after `solve;` would change the model or its data", "run `dfl solve` once per variant"),
("ampl_let_in_a_for_after_solve",
 "set I;\nvar x{I} >= 1;\nminimize z: sum{i in I} x[i];\nsolve;\n"
 "for {i in I} { printf \"%g\\n\", x[i]; fix x[i]; }\n", 5, 37,
 "`fix` after `solve;` would change the model or its data", "output statements"),
("ampl_let_command",
 "param p;\nlet p := 3;\n", 2, 1, "`let` is an AMPL command", "dfl solve"),
("ampl_option_command",
 "option solver highs;\nvar x;\n", 1, 1, "`option` is an AMPL command", "dfl solve"),
("ampl_model_command",
 "model diet.mod;\ndata diet.dat;\n", 1, 1, "`model` is an AMPL command", "dfl solve"),
("ampl_data_command",
 "var x;\n  data diet.dat;\n", 2, 3, "`data` is an AMPL command", "dfl solve"),
("model_name_then_a_slip",
 "model m x;\n", 1, 9, "unexpected `x`", None),
("block_comment_unclosed",
 "set I;\n/* the data\nparam c{I};\n", 2, 1, "unclosed comment `/*`", "close it with `*/`"),
("single_bar",
 "set I;\nvar x{I};\ns.t. c{i in I: i >= 1 | i <= 3}: x[i] >= 0;\n", 3, 23,
 "unexpected character `|`", "`or`"),
("keyword_as_name",
 "set I;\nparam set{I};\n", 2, 7, "`set` is a reserved word", "rename it, e.g. `set_`"),
("keyword_as_dummy",
 "set I;\nvar x{I};\nminimize z:\n  sum{sum in I} x[sum];\n",
 4, 7, "`sum` is a reserved word", None),
("reduction_with_brackets",
 "set I;\nvar x{I};\nminimize z: sum[i in I] x[i];\n", 3, 13,
 "`sum` takes an index in braces or a whole array", "(braces, not brackets)"),
("reduction_without_index",
 "set I;\nvar x{I};\nminimize z: max x;\n", 3, 13, "`max` takes an index in braces",
 "write `max{i in SET} ...`"),
("variable_called_like_a_function",
 "set I;\nvar x{I};\nminimize z: sum{i in I} x(i);\n", 3, 25, "unknown function `x`",
 "`x` is a var: index it with brackets"),
("exponent_from_data",
 "param p default 2;\nvar x;\nminimize z: (x - 1)^p;\n", 3, 21,
 "must be a literal number", "must be known before the data"),
("keyword_as_objective_name",
 "var x;\nminimize min: x;\n", 2, 10, "`min` is a reserved word", None),
("unterminated_string",
 'set I = {"a", "b};\nparam c{I};\n', 1, 15, "unterminated string", 'close it with `"`'),
("initial_value_twice",
 "set I;\nvar x{I} >= 0 := 3, := 4;\n", 2, 21, "variable `x` has two initial values", None),
("initial_value_of_a_variable",
 "var y;\nvar x := 2 * y;\n", 2, 10, "a variable's initial value must be a number from data",
 None),
("missing_operator",
 "var x;\nvar y;\nminimize z: x;\ns.t. c: x <= 3 y;\n",
 4, 16, "unexpected `y`", "operator missing"),
("sum_with_parentheses",
 "set I;\nvar x{I};\nminimize z: sum(i in I) x[i];\n", 3, 13, "braces", "sum{i in SET}"),
("if_without_parentheses",
 "param a;\nvar x;\nminimize z:\n  x + if a > 0 then 1 else 2;\n", 4, 7, "without parentheses",
 "(if ... then ... else ...)"),
("reduction_out_of_place",
 "set I;\nvar x{I};\nminimize z:\n  2 ^ sum{i in I} x[i];\n", 4, 7,
 "`sum{...}` can't appear here without parentheses", "(sum{...} ...)"),
("misspelled_statement_keyword",
 "var x;\nminimise z: x;\n", 2, 1, "unexpected `minimise`", "did you mean `minimize`?"),
("misspelled_domain",
 "set I;\nvar x{I}\n  binery;\n", 3, 3, "unexpected `binery`", "did you mean `binary`?"),
("misspelled_kind",
 "set I;\nparam v{I} : predicte;\n", 2, 14, "unexpected `predicte`", "did you mean `predicted`?"),
("misspelled_in",
 "set I;\nvar x{I};\nminimize z: sum{i inn I} x[i];\n", 3, 19, "unexpected `inn`",
 "did you mean `in`?"),
("st_without_dots",
 "var x;\nminimize z: x;\nst c: x >= 0;\n", 3, 1, "unexpected `st`", "`s.t.`"),
("unfinished_at_eof",
 "var x;\nminimize z: x +\n", 2, 16, "unexpected end of file", None),
("subject_without_to",
 "var x;\nminimize z: x;\nsubject c: x <= 3;\n", 3, 9, "unexpected `c`; expected `to`", None),
# ---------------------------------------------------------------- names
("unknown_name_did_you_mean",
 "set ITEMS;\nparam weight{ITEMS};\nvar x{ITEMS} >= 0;\n"
 "minimize z:\n  sum{i in ITEMS} wieght[i] * x[i];\n",
 5, 19, "unknown name `wieght`", "did you mean `weight`?"),
("unknown_set_did_you_mean",
 "set ITEMS;\nvar x{ITEMS} >= 0;\nminimize z: sum{i in ITEM} x[i];\n", 3, 22, "unknown name `ITEM`",
 "did you mean `ITEMS`?"),
("unknown_dummy",
 "set ITEMS;\nparam weight{ITEMS};\nvar x{ITEMS} >= 0;\n"
 "minimize z:\n  sum{i in ITEMS} weight[j] * x[i];\n",
 5, 26, "unknown name `j`", "the dummies in scope here are `i`"),
("unknown_function_did_you_mean",
 "set I;\nvar x{I} >= 0;\nmaximize z:\n  sum{i in I} sqrtt(x[i]);\n", 4, 15,
 "unknown function `sqrtt`", "did you mean `sqrt`?"),
("unknown_function_norm",
 "param n : int;\nvar v[n];\nminimize z: norm(v);\n", 3, 13, "unknown function `norm`",
 "did you mean"),
("too_few_subscripts",
 "set I;\nparam c{I, I};\nvar x{I} >= 0;\nminimize z:\n  sum{i in I} c[i] * x[i];\n", 5, 15,
 "`c` takes 2 subscripts, got 1", "declared on line 2"),
("too_many_subscripts",
 "set I;\nparam c{I};\nvar x{I} >= 0;\nminimize z:\n  sum{i in I} c[i, i] * x[i];\n", 5, 15,
 "`c` takes 1 subscript, got 2", "declared on line 2"),
("subscript_on_scalar",
 "var x;\nminimize z: x;\ns.t. d{i in 1..3}:\n  x[i] >= i;\n", 4, 3, "`x` is not indexed", None),
("too_many_subscripts_shape",
 "param n : int;\nvar v[n];\nminimize z:\n  v[1, 2];\n", 4, 3, "too many subscripts", None),
("duplicate_declaration",
 "set I;\nparam c{I};\nvar x;\nparam c{I};\n", 4, 7, "`c` is declared twice",
 "the first declaration (param) is on line 2"),
("used_before_declaration",
 "set I;\nvar x{I} >= 0;\nminimize z: sum{i in I} c[i] * x[i];\nparam c{I};\n", 3, 25,
 "`c` is used before its declaration", "declared on line 4"),
("refers_to_itself",
 "param a;\nparam b = 2 * b + a;\n", 2, 15, "`b` refers to itself", None),
("constraint_used_as_value",
 "var x;\ns.t. c: x >= 0;\nminimize z: x + c;\n", 3, 17, "the constraint `c` can't be used", None),
("model_not_first",
 "var x;\nmodel late;\n", 2, 7, "must be the first statement", None),
# ---------------------------------------------------------------- shapes
("matmul_shape_mismatch",
 "param A[3, 4];\nvar x[5];\nminimize z:\n  sum(A @ x);\n",
 4, 7, "shape mismatch in `@`: [3, 4] @ [5]",
 "inner sizes"),
("plus_shape_mismatch",
 "var x[3];\nvar y[4];\nminimize z:\n  sum(x + y);\n",
 4, 7, "shapes [3] and [4] don't match", None),
("compare_shape_mismatch",
 "var x[3];\nminimize z: sum(x);\ns.t. c:\n  x <= ones(4);\n", 4, 3, "don't match", None),
("quad_form_bad_sizes",
 "param P[3, 3] psd;\nvar x[4];\nminimize z:\n  quad_form(x, P);\n", 4, 16,
 "`quad_form` needs x of length n and P of n x n", None),
("quad_form_vector_matrix",
 "param n : int;\nparam P[n] ;\nvar x[n];\nminimize z:\n  quad_form(x, P);\n", 5, 16,
 "must be a square matrix", None),
("quad_form_swapped",
 "param n : int;\nparam P[n, n] psd;\nvar x[n];\nminimize z:\n  quad_form(P, x);\n", 5, 16,
 "argument 2 of `quad_form` must be data", None),
("matmul_of_scalars",
 "var x;\nparam a;\nminimize z:\n  a @ x;\n", 4, 3, "`@` needs vectors or matrices", None),
("vector_objective",
 "param n : int;\nvar v[n];\nminimize z:\n  v;\n", 4, 3, "the objective must be a scalar", None),
# ---------------------------------------------------------------- curvature and classes
("nonconvex_objective_sqrt",
 "var x >= 0;\nminimize z:\n  sqrt(x);\n", 3, 3,
 "objective is not convex: `sqrt` of an affine expression is concave, minimized here",
 "flip the sense"),
("nonconcave_objective",
 "var x;\nmaximize z:\n  3 * x - x^2 + abs(x);\n",
 3, 17, "objective is not concave: `abs` of an affine expression is convex", None),
("minimize_negated_square",
 "var x;\nminimize z:\n  -x^2;\n", 3, 3, "`-x^2` is concave, minimized here", None),
("nonconvex_constraint",
 "var x;\nvar y;\nminimize z: x;\ns.t. c:\n  x * y <= 1;\n", 5, 3,
 "constraint is not convex: `x * y` multiplies two expressions with variables", None),
("nonconvex_constraint_ge",
 "var x;\nminimize z: x;\ns.t. c:\n  x^2 >= 1;\n",
 4, 3, "constraint is not convex: `x^2` is convex",
 "needs a concave `a`"),
("subtracted_convex_in_a_constraint",
 "var x;\nminimize z: x;\ns.t. c: x^2\n  - x^4 <= 1;\n",
 4, 5, "`x^4` is convex, and it is subtracted (left side of `<=`)", "needs a convex `a`"),
("subtracted_convex_in_the_objective",
 "var x;\nminimize z: x^2\n  - x^4;\n",
 3, 5, "`x^4` is convex, subtracted from a minimized objective", None),
("nonaffine_equality",
 "var x >= 0;\nminimize z: x;\ns.t. c:\n  sqrt(x) == 1;\n",
 4, 3, "constraint is not convex", "affine"),
("quad_form_not_psd",
 "param n : int;\nparam P[n, n];\nvar x[n];\nminimize z: sum(x);\ns.t. c:\n"
 "  quad_form(x, P) <= 1;\n", 6, 3, "only when its matrix is declared `psd`", "psd"),
("predicted_in_sqrt",
 "param p : predicted;\nvar x >= 0;\nminimize z: x;\ns.t. c:\n  sqrt(p * x) >= 1;\n", 5, 8,
 "a predicted param enters `sqrt` nonlinearly", None),
("predicted_squared",
 "param p : predicted;\nvar x >= 0;\nminimize z:\n  p * p * x;\n", 4, 3,
 "a product of two predicted params", None),
("predicted_times_quadratic",
 "param p : predicted;\nvar x >= 0;\nminimize z:\n  p * x * x;\n", 4, 3,
 "a predicted param multiplies a nonlinear expression", None),
("predicted_divides",
 "param p : predicted;\nvar x >= 0;\nminimize z: x;\ns.t. c:\n  x / p <= 1;\n", 5, 7,
 "can only divide by data", None),
("predicted_computed",
 "param a;\nparam p : predicted\n   = 2 * a;\n",
 3, 6, "a predicted param can't be computed with `=`",
 None),
("integer_stiefel",
 "param n : int;\nvar X[n, 2] integer in stiefel;\n",
 2, 21, "`stiefel` can't be combined with `integer`",
 "a stiefel variable is continuous"),
("stiefel_vector",
 "param n : int;\nvar X[n] in stiefel;\n", 2, 10, "a stiefel variable is a matrix", None),
("stiefel_set_indexed",
 "set I;\nvar X{I, I} in stiefel;\n", 2, 13, "a stiefel variable is a matrix", None),
("binary_and_integer",
 "var x binary\n   integer;\n", 2, 4, "`integer` can't be combined with `binary`", None),
# ---------------------------------------------------------------- constraints
("mixed_chain",
 "var x;\nminimize z: x;\ns.t. c:\n  1 <= x >= 0;\n", 4, 8, "mixed-direction chained comparison",
 "a chain is"),
("chain_with_equality",
 "var x;\nminimize z: x;\ns.t. c:\n  0 <= x == 3;\n",
 4, 8, "mixed-direction chained comparison", None),
("strict_less",
 "var x;\nminimize z: x;\ns.t. c:\n  x < 3;\n",
 4, 7, "strict `<` can't be a constraint", "use `<=`"),
("strict_greater",
 "var x;\nminimize z: x;\ns.t. c:\n  x > 3;\n",
 4, 7, "strict `>` can't be a constraint", "use `>=`"),
("not_equal",
 "var x;\nminimize z: x;\ns.t. c:\n  0 <= x != 3;\n", 4, 13,
 "`!=` can't be a constraint in a chain", "a constraint of its own"),
("not_a_comparison",
 "var x;\nminimize z: x;\ns.t. c:\n  x + 3;\n", 4, 3, "a constraint must be a comparison", None),
("constraint_with_and",
 "var x;\nminimize z: x;\ns.t. c:\n  x >= 0 and x <= 3;\n",
 4, 3, "a constraint must be a comparison",
 "one constraint per comparison"),
("chain_with_variable_outside",
 "var x;\nvar y;\nminimize z: x;\ns.t. c:\n  x <= y <= 3;\n", 5, 3,
 "the outer parts of a chained constraint must be data", None),
# ---------------------------------------------------------------- conditions and sets
("filter_on_variable",
 "set I;\nvar x{I};\nminimize z: sum{i in I} x[i];\ns.t. c{i in I:\n  x[i] >= 1}: x[i] <= 3;\n",
 5, 3, "a condition can only use data and dummies", None),
("if_on_variable",
 "var x;\nminimize z:\n  if x >= 1 then 1 else 2;\n", 3, 6, "a condition can only use data", None),
("pairs_bound_to_one_name",
 "set NODES;\nset ARCS within NODES * NODES;\nvar f{ARCS} >= 0;\n"
 "minimize z:\n  sum{a in ARCS} f[a];\n",
 5, 7, "the set holds 2-tuples but 1 name(s) are bound", "bind its components: `(a, b) in ...`"),
("tuple_too_wide",
 "set NODES;\nset ARCS within NODES * NODES;\nvar f{ARCS} >= 0;\n"
 "minimize z:\n  sum{(i, j, k) in ARCS} f[i, j];\n",
 5, 7, "the set holds 2-tuples but 3 name(s) are bound", None),
("divide_by_variable",
 "var x >= 1;\nvar y;\nminimize z: x;\ns.t. c:\n  y / x <= 3;\n", 5, 7, "can only divide by data",
 "multiply instead"),
("set_used_as_number",
 "set I;\nvar x;\nminimize z:\n  I + x;\n", 4, 3, "`+` needs numbers, got a set", None),
("set_times_number",
 "set I;\nvar x{I};\nminimize z:\n  sum{i in I} I * x[i];\n",
 4, 15, "needs numbers, got a set", None),
("number_used_as_set",
 "param n : int;\nvar x;\nminimize z:\n  sum{i in n} x;\n",
 4, 12, "expected a set after `in`", None),
("union_of_number",
 "set I;\nparam a;\nset J = I\n  union a;\n", 4, 9, "`union` needs sets", None),
("index_by_variable",
 "set I;\nvar k;\nparam c{I};\nminimize z:\n  c[k];\n", 5, 5, "an index must be data", None),
("dummy_hides_name",
 "set I;\nparam x;\nvar y{I};\nminimize z:\n  sum{x in I} y[x];\n",
 5, 7, "dummy `x` hides the param `x`",
 "pick another name"),
("range_with_fraction",
 "var x{1..2.5};\n", 1, 10, "a range's bound must be an integer", None),
("psd_on_vector",
 "param n : int;\nparam P[n]\n  psd;\n", 3, 3, "applies to a square matrix", None),
("predicted_and_uncertain",
 "param p : predicted, uncertain;\n", 1, 7, "either `predicted` or `uncertain`", None),
("variable_bound_on_variable",
 "var y;\nvar x >=\n  y;\n", 3, 3, "a variable's bound must be a number from data", None),
("wrong_atom_arity",
 "var x;\nminimize z:\n  sqrt(x, 2);\n", 3, 3, "`sqrt` takes 1 argument(s), got 2", None),
("exponent_variable",
 "var x;\nminimize z:\n  2 ^ x;\n", 3, 7, "an exponent must be a scalar constant", None),
("cvar_alpha_variable",
 "param u : uncertain;\nvar x;\nminimize z:\n  cvar(x, u * x);\n", 4, 8,
 "argument 1 of `cvar` must be data", None),
("too_deep",
 "var x;\nminimize z:\n  " + "-(" * 200 + "x" + ")" * 200 + ";\n",
 3, None, "nested too deeply", None),
]
# fmt: on


@pytest.mark.parametrize(
    ("source", "line", "column", "message", "hint"),
    [pytest.param(*case[1:], id=case[0]) for case in CASES],
)
def test_broken_model(
    source: str, line: int, column: int | None, message: str, hint: str | None
) -> None:
    with pytest.raises(dfl.DflError) as info:
        dfl.parse(source, "m.opt")
    error = info.value
    report = str(error)
    assert error.pos.line == line, report
    if column is not None:
        assert error.pos.column == column, report
    assert message in error.message, report
    if hint is not None:
        assert error.hint is not None and hint in error.hint, report

    # the report: FILE:LINE:COL: error: MESSAGE, the source line, a caret under the mistake
    lines = report.splitlines()
    assert lines[0] == f"m.opt:{error.pos.line}:{error.pos.column}: error: {error.message}"
    source_line = source.splitlines()[line - 1].expandtabs(1)
    caret = lines[2]
    assert caret.strip() and set(caret.strip()) == {"^"}
    if len(source_line) <= WINDOW:
        assert lines[1] == "    " + source_line
        assert caret.index("^") == 4 + error.pos.column - 1
    else:  # a window of the line around the column
        shown = lines[1][4:]
        assert shown.removeprefix("...").removesuffix("...") in source_line
        assert shown[caret.index("^") - 4] == source_line[error.pos.column - 1]
    if error.hint:
        assert lines[-1] == f"hint: {error.hint}"
    assert "Traceback" not in report


def test_there_are_enough_cases() -> None:
    assert len(CASES) >= 30
    assert len({case[0] for case in CASES}) == len(CASES)


def test_error_without_a_file_name() -> None:
    with pytest.raises(dfl.DflError) as info:
        dfl.parse("var x;\nminimize z: y;\n")
    assert str(info.value).startswith("<string>:2:13: error: unknown name `y`")


def test_load_reports_the_path(tmp_path) -> None:
    path = tmp_path / "broken.opt"
    path.write_text("set I;\nparam c{I}\nvar x;\n")
    with pytest.raises(dfl.DflError) as info:
        dfl.load(path)
    assert str(info.value).startswith(f"{path}:2:11: error: missing `;`")
