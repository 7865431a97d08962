"""The fuzzers' inputs and judges, shared by tests/test_fuzz*.py (hypothesis, bounded) and
benchmarks/fuzz.py (the long run that docs/reliability.md reports).

Every input is made from a `random.Random`, so a failure reproduces from its seed:

* `mutated_case`: a spec or example model with its data, the model text mutated token by token
  and/or the data mutated value by value (huge, NaN, text, null, missing, resized, emptied),
  then load -> check -> bind -> compile (`front_end`), or on to a solve (`solved_case`);
* `random_model`: a small LP, MILP or QP written in the language (sets or shapes, bounds,
  equality / ranged rows, abs / max / norm1 / sum_squares), solved by HiGHS and by CVXPY.

The judges return an outcome word: `ok`, `error` (a `DflError` that names its file, and a
line within it when it has one), `agree`; or raise `Crash` / `Mismatch` with the input's story.
"""

from __future__ import annotations

import copy
import json
import math
import os
import random
import re
import tempfile
import warnings
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import dfl_dsl as dfl
from dfl_dsl.evaluate.sizes import ENV

ROOT = Path(__file__).resolve().parents[1]
SPEC = ROOT / ".." / "shared" / "spec"
EXAMPLES = ROOT / "examples"


class Crash(AssertionError):
    """An exception other than a clean DflError, or an error that isn't located."""


class Mismatch(AssertionError):
    """HiGHS and CVXPY disagree on a model both accept."""


@dataclass(frozen=True)
class Case:
    name: str
    text: str
    data: dict


# ---------------------------------------------------------------------- the corpus
def cases() -> list[Case]:
    """The spec's models with their data, and the examples' with theirs (a .json beside the
    model, or a small instance from the model's data recipe)."""
    found = []
    if SPEC.is_dir():
        for opt in sorted(SPEC.glob("*.opt")):
            data = SPEC / f"{opt.stem}.json"
            if data.is_file():
                found.append(Case(opt.stem, opt.read_text(), json.loads(data.read_text())))
    for opt in sorted(EXAMPLES.glob("*/*.opt")):
        data = _example_data(opt)
        if data is not None:
            found.append(Case(f"examples/{opt.stem}", opt.read_text(), data))
    return found


def _example_data(opt: Path) -> dict | None:
    beside = sorted(opt.parent.glob("*.json"))
    if beside and opt.with_suffix(".json").is_file():
        return json.loads(opt.with_suffix(".json").read_text())
    from dfl_dsl.learn.recipe import find_recipe, run_generator

    recipe = find_recipe(opt)
    if recipe is None:
        return None
    made = run_generator(recipe.generator, {**recipe.args, "num_data": 2})
    return json.loads(json.dumps(made.instance))


# ---------------------------------------------------------------------- model text mutations
KEYWORDS = (
    "set param var minimize maximize subject to s.t. expr model in within binary integer int "
    "predicted uncertain psd default sum if then else and or not stiefel max min union diff "
    "inter inf symmetric"
).split()
PUNCTUATION = (
    "; : , { } [ ] ( ) + - * / ^ @ = == != < <= > >= .. .T # \" ' $ & | ! . \n"
).split(" ")
WORDS = (
    "x y i j t I J n m A P c p u v 0 1 2 -1 0.5 1e-3 1e999 \"a\" sqrt abs log exp norm1 norm2 "
    "quad_form sum_squares trace diag eye ones zeros mean cvar worst nnz foo 9223372036854775808 "
    "1e20 1e308 -1e308 1e-320 2048 0.0"
).split()
VOCAB = KEYWORDS + PUNCTUATION + WORDS
_TOKEN = re.compile(
    r"\s+|#[^\n]*|\"[^\"\n]*\"|\.\.|s\.t\.|\.T|[A-Za-z_]\w*|\d+(?:\.\d+)?(?:[eE][+-]?\d+)?"
    r"|[<>=!]=|.",
    re.S,
)


def tokens(text: str) -> list[str]:
    return [m.group(0) for m in _TOKEN.finditer(text)]


def mutate(text: str, ops: list[tuple[int, int, int, str]], corpus: list[str]) -> str:
    """Apply token, character and line edits: (op, a, b, word) each, op in 0..7."""
    toks = tokens(text)
    for op, a, b, word in ops:
        n = len(toks)
        k = a % (n + 1)
        if op == 0 and n:
            del toks[k % n]  # delete a token
        elif op == 1:
            toks.insert(k, word)  # insert a word
        elif op == 2 and n:
            toks.insert(k, toks[k % n])  # duplicate a token
        elif op == 3 and n:
            i, j = k % n, b % n  # swap two tokens
            toks[i], toks[j] = toks[j], toks[i]
        elif op == 4 and n:
            toks[k % n] = word  # replace a token
        elif op == 5:
            toks = tokens(_edit_character("".join(toks), a, b, word))
        elif op == 6:
            lines = "".join(toks).splitlines(keepends=True)  # splice a line from another model
            other = corpus[b % len(corpus)].splitlines(keepends=True) or [""]
            lines.insert(a % (len(lines) + 1), other[b % len(other)])
            toks = tokens("".join(lines))
        elif op == 7:
            lines = "".join(toks).splitlines(keepends=True)  # delete or duplicate a line
            if lines:
                i = a % len(lines)
                if b % 2:
                    del lines[i]
                else:
                    lines.insert(i, lines[i])
            toks = tokens("".join(lines))
    return "".join(toks)


def _edit_character(flat: str, a: int, b: int, word: str) -> str:
    c = a % (len(flat) + 1)
    choice = b % 3
    if choice == 0:
        return flat[:c] + word[:1] + flat[c:]
    if choice == 1:
        return flat[:c] + flat[c + 1:]
    return flat[:c] + chr(32 + b % 95) + flat[c + 1:]


def random_ops(rng: random.Random, vocab: list[str] = VOCAB) -> list[tuple[int, int, int, str]]:
    return [(rng.randrange(8), rng.randrange(10**6), rng.randrange(10**6), rng.choice(vocab))
            for _ in range(rng.randint(1, 6))]


# ---------------------------------------------------------------------- data mutations
ODD_VALUES = [0, -1, 2.5, 1e20, 1e300, -1e308, 10**30, 2**63, 9223372036854775809, 10**400,
              float("nan"), float("inf"), float("-inf"), "x", "inf", "", None, True, [], {},
              [1, 2], {"a": 1}, "GARY", 1e-320]


def mutate_data(data: dict, rng: random.Random) -> dict:
    """Copy `data` and change a few values, keys and list lengths."""
    data = copy.deepcopy(data)
    for _ in range(rng.randint(1, 4)):
        paths = list(_paths(data, ()))
        if not paths:
            break
        path = rng.choice(paths)
        parent, key = _parent(data, path), path[-1]
        op = rng.randrange(7)
        if op == 0:
            parent[key] = _odd(rng)
        elif op == 1 and isinstance(parent, dict):
            del parent[key]
        elif op == 2 and isinstance(parent[key], list) and parent[key]:
            del parent[key][rng.randrange(len(parent[key]))]  # one entry fewer
        elif op == 3 and isinstance(parent[key], list) and parent[key]:
            parent[key].append(copy.deepcopy(rng.choice(parent[key])))  # a repeat
        elif op == 4 and type(parent[key]) in (int, float) and abs(parent[key]) < 1e300:
            parent[key] = parent[key] * rng.choice([10**6, -1, 0.5, 10**19, 1e-9])
        elif op == 5:  # a key added (or one replaced) at the top
            data[rng.choice(["extra", "n", "x", str(path[0])])] = _odd(rng)
        elif op == 6:  # a top-level value emptied (a set, a keyed param, a size): few of
            top = path[0]  # the paths are at the top, and empty sets met scalars wrongly
            data[top] = {} if isinstance(data[top], dict) else [] if isinstance(
                data[top], list) else 0
    return data


def _odd(rng: random.Random):
    return copy.deepcopy(rng.choice(ODD_VALUES))  # (a fresh [] or {}: never shared)


def _paths(node, at: tuple):
    if isinstance(node, dict):
        for key, value in node.items():
            yield at + (key,)
            yield from _paths(value, at + (key,))
    elif isinstance(node, list):
        for k, value in enumerate(node[:50]):  # (enough to reach every kind of entry)
            yield at + (k,)
            yield from _paths(value, at + (k,))


def _parent(data, path: tuple):
    node = data
    for key in path[:-1]:
        node = node[key]
    return node


# ---------------------------------------------------------------------- the front-end judge
_DATA_FILE = Path(tempfile.mkdtemp(prefix="dfl-fuzz-")) / "fuzz.json"
# the size cap while judging: a mutated size just under the default cap (50,000,000 entries)
# binds for a minute and gigabytes -- legitimately, but no test of correctness needs that
FUZZ_MAX_ENTRIES = "1000000"


@contextmanager
def _judging():
    """Warnings ignored (a library's warning is no finding here) and the size cap lowered."""
    saved = os.environ.get(ENV)
    os.environ[ENV] = FUZZ_MAX_ENTRIES
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        if saved is None:
            del os.environ[ENV]
        else:
            os.environ[ENV] = saved


def front_end(text: str, data: dict | str | None) -> str:
    """load -> check -> bind -> compile; `data` as a mapping written to a JSON file, or as
    JSON text. `ok` or `error`; raises `Crash` otherwise."""
    return _judged(text, lambda: _compiled(text, data))[0]


def _compiled(text: str, data: dict | str | None):
    model = dfl.parse(text, "fuzz.opt")
    if data is None:
        return None
    _DATA_FILE.write_text(data if isinstance(data, str) else json.dumps(data))
    inst = model.bind(_DATA_FILE)
    inst.compile()
    return inst


def _judged(text: str, steps):
    """(`ok`, what `steps()` returns) or (`error`, None) for a located DflError; raises
    `Crash` for anything else."""
    try:
        with _judging():
            return "ok", steps()
    except dfl.DflError as error:
        _check_located(error, text)
        return "error", None
    except Exception as exc:  # noqa: BLE001 - the point: anything else is a finding
        raise Crash(f"{type(exc).__name__}: {exc}") from exc


SOLVE_SECONDS = 5.0


def solved_case(text: str, data: dict | str | None) -> str:
    """`front_end`, then the compiled instance solved by the backend `auto` picks and, for an
    LP, MILP or QP without scenarios, by HiGHS and by CVXPY, compared as in `cross_check`:
    `ok`, `agree`, `error` (a located DflError at any step: a backend refusing the class
    too), or a `Crash` / `Mismatch`. The data mutations make instances no spec has (empty
    sets, sizes 0, huge values): an SCM objective left with no concave term crashed AAPGA."""
    word, answers = _judged(text, lambda: _solve_all(text, data))
    if answers is None:
        return word
    _compare(*answers)
    return "agree"


def _solve_all(text: str, data: dict | str | None):
    inst = _compiled(text, data)
    if inst is None:
        return None
    inst.solve(time_limit=SOLVE_SECONDS)
    klass = inst.model.klass
    if klass.name not in ("LP", "MILP", "QP") or klass.scenarios:
        return None
    highs = inst.solve("highs", time_limit=SOLVE_SECONDS)
    cvx = inst.solve("cvxpy", time_limit=SOLVE_SECONDS)
    if "time_limit" in (highs.status, cvx.status):
        return None
    return highs, cvx, inst


def _check_located(error: dfl.DflError, text: str) -> None:
    check_located(error, {"fuzz.opt": text, str(_DATA_FILE): None})


def check_located(error: dfl.DflError, files: dict[str, str | None]) -> None:
    """`error` names one of `files` (name -> its text, None: not checked for lines), with a
    one-line message, at a line within that file's text when it has a line (and its report,
    with the line and a caret under the place, made without an exception)."""
    try:
        report = error.format()
    except Exception as exc:  # noqa: BLE001
        raise Crash(f"formatting the error failed: {type(exc).__name__}: {exc}") from exc
    if error.filename not in files:
        raise Crash(f"an error naming no input file: {report}")
    if not error.message or "\n" in error.message:
        raise Crash(f"an empty or multi-line message: {report}")
    text = files[error.filename]
    if text is not None and error.pos.line:
        lines = text.split("\n")
        if not 1 <= error.pos.line <= len(lines) or not (
                1 <= error.pos.column <= len(lines[error.pos.line - 1]) + 1):
            raise Crash(f"a position outside the file: {report}")


def mutated_case(rng: random.Random, corpus: list[Case]) -> tuple[str, str | dict | None]:
    """A case with its model text, its data, or both mutated (as model text and JSON)."""
    case = rng.choice(corpus)
    texts = [c.text for c in corpus]
    how = rng.randrange(4)
    text = mutate(case.text, random_ops(rng), texts) if how in (0, 2) else case.text
    data: str | dict | None = case.data
    if how in (1, 2):
        data = mutate_data(case.data, rng)
    elif how == 3:  # the JSON text itself, character by character
        flat = json.dumps(case.data)
        for _ in range(rng.randint(1, 3)):
            flat = _edit_character(flat, rng.randrange(10**6), rng.randrange(10**6),
                                   rng.choice(["]", "}", ",", '"', "1e999", "-", "n"]))
        data = flat
    return text, data


# ---------------------------------------------------------------------- generated models
def random_model(rng: random.Random) -> tuple[str, dict]:
    """A small LP, MILP or QP and its data: sets or shapes, finite or missing bounds,
    <=, >=, == and ranged rows, and atoms the LP bridges rewrite (abs, max, norm1)."""
    n, m = rng.randint(1, 5), rng.randint(0, 4)
    integer = rng.random() < 0.3
    quadratic = not integer and rng.random() < 0.3
    sense = rng.choice(["minimize", "maximize"])
    sign = "+" if sense == "minimize" else "-"  # convex terms added, concave subtracted
    shape = rng.random() < 0.4
    data = {"n": n, "m": m,
            "c": [rng.randint(-5, 5) for _ in range(n)],
            "A": [[rng.randint(-4, 4) for _ in range(n)] for _ in range(m)],
            "b": [rng.randint(-3, 12) for _ in range(m)],
            "lo": [rng.choice([-5, -2, 0, 0, 1, "-inf"]) for _ in range(n)],
            "hi": [rng.choice([2, 5, 10, "inf"]) for _ in range(n)]}
    head = ("param n : int; param m : int; set I = 0..n-1; set J = 0..m-1; param c[n]; "
            "param A[m, n]; param b[m]; param lo[n]; param hi[n];\n")
    if shape:
        var = f"var x[n] {'integer ' if integer else ''}>= lo <= hi;\n"
        linear = "c @ x"
        row = "A @ x"
    else:
        var = f"var x{{i in I}} {'integer ' if integer else ''}>= lo[i] <= hi[i];\n"
        linear = "sum{i in I} c[i] * x[i]"
        row = "sum{i in I} A[j, i] * x[i]"
    terms = [linear]
    for _ in range(rng.randint(0, 2)):
        k, k2 = rng.randrange(n), rng.randrange(n)
        terms.append(sign + " " + rng.choice(
            [f"abs(x[{k}] - {rng.randint(-3, 3)})", f"max(x[{k}], x[{k2}])",
             f"{rng.randint(1, 3)} * norm1(x)", f"max(x[{k}] - x[{k2}], {rng.randint(-2, 2)})"]))
    if quadratic:
        terms.append(f"{sign} {rng.choice([1, 0.5, 2])} * sum_squares(x)")
    rows = ""
    if m:
        op = rng.choice(["<=", ">=", "==", "ranged"])
        index = "[m]" if shape else "{j in J}"
        body = row if not shape else "A @ x"
        rhs = "b" if shape or rng.random() < 0.2 else "b[j]"  # (b: a vector row per j)
        rows += (f"subject to rows{index}: -20 <= {body} <= {rhs};\n" if op == "ranged"
                 else f"subject to rows{index}: {body} {op} {rhs};\n")
    if rng.random() < 0.4:
        k, k2 = rng.randrange(n), rng.randrange(n)
        rows += rng.choice([f"subject to spread: abs(x[{k}] - x[{k2}]) <= {rng.randint(0, 4)};\n",
                            f"subject to cap: max(x[{k}], x[{k2}]) <= {rng.randint(-1, 6)};\n",
                            f"subject to budget: norm1(x) <= {rng.randint(1, 12)};\n"])
    text = head + var + f"{sense} f: " + " ".join(terms) + ";\n" + rows
    return text, data


SOLVED = ("optimal", "feasible")


def cross_check(text: str, data: dict) -> str:
    """Solve with HiGHS and with CVXPY: `agree`, `refused` (a clean DflError from a backend:
    a model outside what it takes), or a `Mismatch` / `Crash`."""
    try:
        with _judging():
            inst = dfl.parse(text, "fuzz.opt").bind(data)
            highs, cvx = inst.solve("highs"), inst.solve("cvxpy")
    except dfl.DflError as error:
        _check_located(error, text)
        return "refused"
    except Exception as exc:  # noqa: BLE001
        raise Crash(f"{type(exc).__name__}: {exc}") from exc
    _compare(highs, cvx, inst)
    return "agree"


def _compare(highs, cvx, inst) -> None:
    a, b = _settled(highs.status), _settled(cvx.status)
    story = f"highs {highs.status} {highs.objective}, cvxpy {cvx.status} {cvx.objective}"
    if a in SOLVED and b in SOLVED:
        mip = bool(inst.linear_form().integer.any())
        tol = (1e-4 if mip else 1e-5) * (1.0 + abs(highs.objective))
        if not math.isclose(highs.objective, cvx.objective, rel_tol=0, abs_tol=tol):
            raise Mismatch(story)
        return
    if a == b or {a, b} <= {"infeasible", "unbounded", "infeasible_or_unbounded"} and (
            "infeasible_or_unbounded" in (a, b)):
        return
    raise Mismatch(story)


def _settled(status: str) -> str:
    return "optimal" if status == "feasible" else status
