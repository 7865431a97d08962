"""The AMPL side's fuzz inputs and judges (the rest of the harness is `_fuzz.py`), shared by
tests/test_fuzz_ampl.py (hypothesis, bounded) and benchmarks/fuzz.py (the long run):

* `mutated_mod` (kind `ampl`): a tests/ampl/models/*.mod with its text mutated, and its .dat
  as it is, through load -> check -> bind -> compile (`ampl_front_end`);
* `mutated_dat` (kind `dat`): a model's .dat (or the `data;` part of a model file) mutated by
  tokens, characters and lines, truncated, its table headers swapped or duplicated, `:=` and
  `;` removed, its rows and tuples given the wrong width, its numbers made huge or `.`, its
  elements quoted or renumbered, its statements repeated, word soup put between them; then
  read with the model and bound (`ampl_front_end`);
* `convert_input` (kind `convert`): `dfl data FILE.dat --to json --out OUT` on a mutated .dat,
  with or without `--model`, over no file or an old one (`convert_judge`): exit 0 with a JSON
  mapping that binds as the .dat does (the same sets and values), or exit 2 with
  `FILE:LINE:COL: error:` (or `FILE: error:`) first and the old file (or none) left as it was.

Every input is made from a `random.Random`: a failure reproduces from its seed.
"""

from __future__ import annotations

import contextlib
import io
import json
import random
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

from _fuzz import ROOT, Crash, Mismatch, _edit_character, _judging, check_located, mutate
from _fuzz import random_ops as _random_ops

import dfl_dsl as dfl

MODELS = ROOT / "tests" / "ampl" / "models"


@dataclass(frozen=True)
class AmplCase:
    name: str
    mod: str
    dat: str | None  # None: the data is the model file's `data;` part


def ampl_cases() -> list[AmplCase]:
    found = []
    for folder in sorted(p for p in MODELS.iterdir() if p.is_dir()):
        mod, dat = folder / f"{folder.name}.mod", folder / f"{folder.name}.dat"
        if mod.is_file():
            found.append(AmplCase(folder.name, mod.read_text(),
                                  dat.read_text() if dat.is_file() else None))
    return found


# ---------------------------------------------------------------------- vocabularies
AMPL_VOCAB = (
    "set param var minimize maximize subject to s.t. subj check data ; end ; in within setof "
    "ordered circular cross by dimen default symbolic integer binary >= <= = <> == != < > := "
    ": , { } [ ] ( ) .. + - * / ^ ** div mod union inter diff symdiff sum prod min max forall "
    "exists if then else and or not && || ! card ord ord0 first last next prev member abs "
    "sqrt log exp Infinity -Infinity i j S ORIG cost x 0 1 -1 2.5 1e999 1e308 "
    "9223372036854775808 \"a\" 'b' # /* */ \n"
).split(" ")
DAT_VOCAB = (
    "set param := : ; , ( ) [ ] * (tr) default . Infinity -Infinity + - data ; end ; "
    "GARY FRA x 0 1 -1 2.5 1e400 -1e400 1e308 1e-400 9223372036854775808 nan NaN inf "
    "\"a b\" 'c' '' \"\" # /* */ \n"
).split(" ")
HUGE = ["1e400", "-1e400", "1e308", "-1.7e308", "1e-400", "9223372036854775808",
        "-9223372036854775809", "1" + "0" * 400, "Infinity", "-Infinity", "+Infinity", "NaN",
        "nan", "inf", "-inf", "0x10", "1_000", "1e", "1.2.3", "--1", "+", "-0",
        "4611686018427387905"]


def random_ops(rng: random.Random, vocab: list[str]) -> list[tuple[int, int, int, str]]:
    """One to six edits, one most often (more edits stop at the first error sooner)."""
    return _random_ops(rng, vocab)[: rng.choice([1, 1, 1, 2, 2, 3, 6])]


def own_words(text: str) -> list[str]:
    """The names and numbers of a file (a mutation that swaps one for another is one that a
    reader gets further with: a set used as a param, a member of the wrong set)."""
    return sorted(set(re.findall(r"[A-Za-z_]\w*|\d+(?:\.\d+)?", text)))


# ---------------------------------------------------------------------- .dat mutations
_NUMBER = re.compile(r"(?<![\w.])[+-]?\d+(?:\.\d*)?(?:[eE][+-]?\d+)?(?![\w.])")
_WORDS = re.compile(r"[A-Za-z0-9_.+\-]+|\(tr\)")
_HEADER = re.compile(r":((?:[^:;=]|:(?!=))*?):=")  # a table's `: a b c :=`


def mutate_dat(text: str, rng: random.Random, corpus: list[str]) -> str:
    """One to four edits of AMPL data text (see `_DAT_EDITS`), one most often."""
    for _ in range(rng.choice([1, 1, 1, 2, 2, 3, 4])):
        edit = rng.choice(_DAT_EDITS)
        text = edit(text, rng, corpus)
    return text


def _tokens_edit(text: str, rng: random.Random, corpus: list[str]) -> str:
    vocab = DAT_VOCAB if rng.random() < 0.5 else own_words(text) or DAT_VOCAB
    return mutate(text, random_ops(rng, vocab)[:1], corpus)


def _character(text: str, rng: random.Random, corpus: list[str]) -> str:
    return _edit_character(text, rng.randrange(10**6), rng.randrange(10**6), rng.choice(DAT_VOCAB))


def _truncate(text: str, rng: random.Random, corpus: list[str]) -> str:
    return text[: rng.randrange(len(text) + 1)]


def _punctuation_removed(text: str, rng: random.Random, corpus: list[str]) -> str:
    spots = [m.start() for m in re.finditer(r":=|;", text)]
    if not spots:
        return text
    at = rng.choice(spots)
    return text[:at] + text[at + (2 if text.startswith(":=", at) else 1):]


def _header(text: str, rng: random.Random, corpus: list[str]) -> str:
    """A table header's labels swapped, one duplicated, one dropped, or one added."""
    headers = [m for m in _HEADER.finditer(text) if m.group(1).split()]
    if not headers:
        return text
    found = rng.choice(headers)
    labels = found.group(1).split()
    op, k = rng.randrange(4), rng.randrange(len(labels))
    if op == 0:
        j = rng.randrange(len(labels))
        labels[k], labels[j] = labels[j], labels[k]
    elif op == 1:
        labels.insert(rng.randrange(len(labels) + 1), labels[k])
    elif op == 2:
        del labels[k]
    else:
        labels.insert(k, rng.choice(["NEW", "1", "(tr)", "*", "."]))
    return text[: found.start(1)] + " " + " ".join(labels) + " " + text[found.end(1):]


def _arity(text: str, rng: random.Random, corpus: list[str]) -> str:
    """A row or a tuple one entry short or long."""
    tuples = list(re.finditer(r"\(([^()]*)\)", text))
    if tuples and rng.random() < 0.4:
        found = rng.choice(tuples)
        parts = found.group(1).split(",")
        if rng.random() < 0.5 and len(parts) > 1:
            del parts[rng.randrange(len(parts))]
        else:
            parts.insert(rng.randrange(len(parts) + 1), rng.choice(parts))
        return text[: found.start(1)] + ",".join(parts) + text[found.end(1):]
    lines = text.splitlines(keepends=True)
    rows = [k for k, line in enumerate(lines) if len(_WORDS.findall(line)) >= 2]
    if not rows:
        return text
    k = rng.choice(rows)
    words = list(_WORDS.finditer(lines[k]))
    word = rng.choice(words)
    line = lines[k]
    lines[k] = (line[: word.start()] + line[word.end():] if rng.random() < 0.5
                else line[: word.end()] + " " + word.group() + line[word.end():])
    return "".join(lines)


def _number(text: str, rng: random.Random, corpus: list[str]) -> str:
    """A number made huge, tiny, not a number, or `.` (an entry without a value)."""
    numbers = list(_NUMBER.finditer(text))
    if not numbers:
        return text
    found = rng.choice(numbers)
    new = "." if rng.random() < 0.3 else rng.choice(HUGE)
    return text[: found.start()] + new + text[found.end():]


def _default(text: str, rng: random.Random, corpus: list[str]) -> str:
    """A `default` put after a param's name (or its value changed)."""
    params = list(re.finditer(r"\bparam\s+([A-Za-z_]\w*)", text))
    if not params:
        return text
    found = rng.choice(params)
    new = rng.choice([".", "0", "1e400", "Infinity", "x", "", "default 1", ":="])
    return text[: found.end()] + f" default {new}" + text[found.end():]


def _statement(text: str, rng: random.Random, corpus: list[str]) -> str:
    """A statement given twice, dropped, moved, or taken from another file."""
    parts = text.split(";")
    if len(parts) < 2:
        return text
    k = rng.randrange(len(parts) - 1)
    op = rng.randrange(4)
    if op == 0:
        parts.insert(k, parts[k])
    elif op == 1:
        del parts[k]
    elif op == 2:
        parts.insert(rng.randrange(len(parts)), parts.pop(k))
    else:
        other = rng.choice(corpus).split(";")
        parts.insert(k, rng.choice(other))
    return ";".join(parts)


ODD_CHARACTERS = ["\x00", "\ufeff", "\r", "\r\n", "\t", "\x0c", "\x0b", "\u2028", "\u00a0",
                  "é", "\x85", "\x1b[31m", "\U0001f600", "\u0301", "\\"]


def _odd_character(text: str, rng: random.Random, corpus: list[str]) -> str:
    """A control, invisible or wide character (a line break to `splitlines`, not to `\n`)."""
    at = rng.randrange(len(text) + 1)
    return text[:at] + rng.choice(ODD_CHARACTERS) + text[at:]


_KEYWORDS = frozenset("set param default data end tr Infinity".split())


def _element(text: str, rng: random.Random, corpus: list[str]) -> str:
    """An element written another way: quoted (the same member to AMPL), or as a number a
    reader may take for another one (`01`, `1.0`, `+1`, `1e0`), or odd text."""
    words = [m for m in re.finditer(r"(?<![\w.'\"])[A-Za-z_]\w*|\b\d+\b", text)
             if m.group() not in _KEYWORDS]
    if not words:
        return text
    found = rng.choice(words)
    word = found.group()
    new = rng.choice([f"'{word}'", f'"{word}"', f"0{word}", f"{word}.0", f"+{word}",
                      f"{word}e0", f"'{word} '", "'Zürich'", "'a''b'", "'#'", "'1'", '"2.0"',
                      "1e20", "-0", "''", "'x;y'", "'.'", "'*'"])
    return text[: found.start()] + new + text[found.end():]


def _soup(text: str, rng: random.Random, corpus: list[str]) -> str:
    """A run of data words and punctuation put between two statements."""
    words = DAT_VOCAB + own_words(text)
    soup = " ".join(rng.choice(words) for _ in range(rng.randint(1, 12)))
    parts = text.split(";")
    k = rng.randrange(len(parts))
    parts[k] = parts[k] + "\n" + soup if rng.random() < 0.5 else soup + " " + parts[k]
    return ";".join(parts)


_DAT_EDITS = [_odd_character, _soup, _element, _element, _tokens_edit, _tokens_edit,
              _character, _truncate, _punctuation_removed, _header, _header, _arity, _arity,
              _number, _number, _default, _statement]


# ---------------------------------------------------------------------- the inputs
def mutated_mod(rng: random.Random, corpus: list[AmplCase]) -> tuple[str, str | None]:
    """Kind `ampl`: (model text mutated, its .dat as it is)."""
    case = rng.choice(corpus)
    texts = [c.mod for c in corpus]
    vocab = AMPL_VOCAB if rng.random() < 0.5 else own_words(case.mod)
    text = mutate(case.mod, random_ops(rng, vocab), texts)
    if rng.random() < 0.1:
        text = _odd_character(text, rng, texts)
    return text, case.dat


def mutated_dat(rng: random.Random, corpus: list[AmplCase]) -> tuple[str, str | None]:
    """Kind `dat`: (model text, its data mutated); a model carrying its data after `data;`
    has that part mutated."""
    case = rng.choice(corpus)
    dats = [c.dat for c in corpus if c.dat is not None]
    if case.dat is None:
        head, sep, tail = case.mod.partition("\ndata;")
        return head + sep + mutate_dat(tail, rng, dats), None
    return case.mod, mutate_dat(case.dat, rng, dats)


@dataclass(frozen=True)
class Conversion:
    """Kind `convert`: `dfl data` on `dat` (or on the model file, when `dat` is None), with the
    model as `--model` when `with_model`, over an old output file when `old`."""

    mod: str
    dat: str | None
    with_model: bool
    old: bool


def convert_input(rng: random.Random, corpus: list[AmplCase]) -> Conversion:
    mod, dat = mutated_dat(rng, corpus)
    return Conversion(mod, dat, rng.random() < 0.5, rng.random() < 0.3)


# ---------------------------------------------------------------------- the judges
_DIR = Path(tempfile.mkdtemp(prefix="dfl-fuzz-ampl-"))
MOD_FILE, DAT_FILE, OUT_FILE = _DIR / "fuzz.mod", _DIR / "fuzz.dat", _DIR / "out.json"


def ampl_front_end(mod: str, dat: str | None) -> str:
    """load -> check -> bind -> compile: `ok` or `error` (a located DflError); `Crash` else."""
    try:
        with _judging():
            inst = _bound(mod, dat)
            inst.compile()
            if len(names := [o.name for o in inst.model.objectives]) > 1:  # the last one too
                _bound(mod, dat, objective=names[-1]).compile()
    except dfl.DflError as error:
        check_located(error, {str(MOD_FILE): mod, str(DAT_FILE): as_read(dat)})
        return "error"
    except Exception as exc:  # noqa: BLE001 - the point: anything else is a finding
        raise Crash(f"{type(exc).__name__}: {exc}") from exc
    return "ok"


def as_read(text: str | None) -> str | None:
    """A file's text as Python reads it back (universal newlines: a lone `\r` ends a line),
    which is what the lines and columns of an error about the file count in."""
    return None if text is None else text.replace("\r\n", "\n").replace("\r", "\n")


def _bound(mod: str, dat: str | None, data: Path | None = None, objective: str | None = None):
    """The model text parsed (as MOD_FILE) and bound to `data`, else to `dat` (as DAT_FILE)."""
    model = dfl.parse(mod, str(MOD_FILE), objective)
    if data is None and dat is not None:
        DAT_FILE.write_text(dat)
        data = DAT_FILE
    return model.bind(data)


def convert_judge(case: Conversion) -> str:
    """`dfl data` in this process: `ok` (exit 0, a JSON mapping that binds as the .dat binds)
    or `error` (exit 2, a located message, the output as it was); `Crash`/`Mismatch` else."""
    from dfl_dsl.cli import main

    MOD_FILE.write_text(case.mod)
    source = MOD_FILE if case.dat is None else DAT_FILE
    DAT_FILE.unlink(missing_ok=True)
    if case.dat is not None:
        DAT_FILE.write_text(case.dat)
    OUT_FILE.unlink(missing_ok=True)
    if case.old:
        OUT_FILE.write_text("OLD")
    args = ["data", str(source), "--to", "json", "--out", str(OUT_FILE)]
    if case.with_model and case.dat is not None:
        args += ["--model", str(MOD_FILE)]
    stderr = io.StringIO()
    with _judging(), contextlib.redirect_stderr(stderr), contextlib.redirect_stdout(io.StringIO()):
        code = main(args)
    report = stderr.getvalue()
    left = {p.name for p in _DIR.iterdir()} - {MOD_FILE.name, DAT_FILE.name, OUT_FILE.name}
    if left:
        raise Crash(f"exit {code}: files left beside the output: {sorted(left)}")
    if code == 2:
        return _judge_error(case, report, source)
    if code != 0:
        raise Crash(f"exit {code}: {report[:400]}")
    return _judge_output(case)


_FIRST_LINE = re.compile(r"(?P<file>[^\n]*?)(?::(?P<line>\d+):(?P<col>\d+))?: error: \S")


def _judge_error(case: Conversion, report: str, source: Path) -> str:
    found = _FIRST_LINE.match(report)
    if found is None or found["file"] not in (str(source), str(MOD_FILE)):
        raise Crash(f"exit 2 without a located error: {report[:400]}")
    text = as_read(case.mod if found["file"] == str(MOD_FILE) else case.dat)
    lines = text.split("\n")
    if found["line"] and not (1 <= int(found["line"]) <= len(lines) and 1 <= int(
            found["col"]) <= len(lines[int(found["line"]) - 1]) + 1):
        raise Crash(f"a position outside the file: {report[:400]}")
    if case.old and OUT_FILE.read_text() != "OLD":
        raise Crash(f"the old output was changed by a failed conversion: {report[:300]}")
    if not case.old and OUT_FILE.exists():
        raise Crash(f"a failed conversion left an output file: {report[:300]}")
    return "error"


def _judge_output(case: Conversion) -> str:
    try:
        values = json.loads(OUT_FILE.read_text())
    except (ValueError, UnicodeDecodeError) as exc:
        raise Crash(f"exit 0 but the output is not JSON: {exc}") from exc
    if not isinstance(values, dict):
        raise Crash(f"exit 0 but the output is not a JSON mapping: {type(values).__name__}")
    if case.dat is None or not case.with_model:
        return "ok"
    converted = _DIR / "converted.json"
    OUT_FILE.rename(converted)
    try:
        return _same_binding(case, converted)
    finally:
        converted.unlink()


def _same_binding(case: Conversion, converted: Path) -> str:
    """Where the model binds the .dat, it binds the converted JSON to the same sets and
    values. (Not the other way: a JSON object's keys are text, so an entry keyed 7 finds the
    member '7' that the .dat keeps apart from 7.)"""
    outcomes = []
    for data in (None, converted):
        try:
            with _judging():
                outcomes.append(_fingerprint(_bound(case.mod, case.dat, data)))
        except dfl.DflError as error:
            outcomes.append(f"error: {error.message}")
        except Exception as exc:  # noqa: BLE001
            raise Crash(f"{type(exc).__name__}: {exc}") from exc
    dat, json_ = outcomes
    if isinstance(dat, str):
        return "ok"
    if isinstance(json_, str):
        raise Mismatch(f"the .dat binds: {str(dat)[:200]}; its JSON: {str(json_)[:200]}")
    for name in sorted(set(dat) | set(json_)):
        if repr(dat.get(name)) != repr(json_.get(name)):
            raise Mismatch(f"`{name}` from the .dat: {dat.get(name)!r:.200}; from its JSON: "
                           f"{json_.get(name)!r:.200}")
    return "ok"


def _fingerprint(inst) -> dict:
    """Every bound set's members and every data param's entries and values, as elements."""
    from dfl_dsl.evaluate.elements import element_of

    def rows(keys) -> list:
        return [tuple(element_of(k) for k in row) for row in keys.tolist()]

    out: dict = {f"set {n}": rows(v.keys) for n, v in inst.ctx.sets.items()}
    for name, entity in inst.ctx.entities.items():
        if entity.kind == "data" and entity.data is not None:
            values = entity.data.tolist()
            if entity.elem:
                values = [element_of(v) for v in values]
            out[name] = list(zip(rows(entity.domain.keys()), values, strict=True))
    return out
