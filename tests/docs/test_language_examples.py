"""Every example in docs/language.md runs as the doc says it does.

The doc marks its examples with fenced blocks:

- ```opt        a model; `dfl.load` must accept it. A ```json or ```yaml block right after it
                (only blank lines between) is its data: the model must bind it, and an LP, MILP
                or QP model must solve. Results the doc states after the example (until the
                next model) are checked: "objective 81", "status: infeasible", "class: MILP".
- ```opt-error  a model (with optional data) that must raise `dfl.DflError` somewhere between
                load and solve; each `# error: TEXT` line in it names text the message holds.
- ```console    `$ dfl ...` commands run on the latest example's files (named after its
                `model NAME;`), with the output the doc shows; `[exit status N]` gives the exit
                status (0 when absent); a `...` line stands for output left out. Times and
                the list of installed backends may differ.
- ```python     runs, in a folder holding the latest example's files; a ```text block right
                after it is what it prints.
- ```json / ```yaml blocks that follow no model are more data for the latest example.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import yaml

import dfl_dsl as dfl

DOC = Path(__file__).resolve().parents[2] / "docs" / "language.md"
SOLVABLE = {"LP", "MILP", "QP"}
MODEL_LANGS = {"opt", "opt-error"}
DATA_LANGS = {"json", "yaml", "dat"}  # also the data files' extensions

FENCE = re.compile(r"^```([\w-]*)\s*$")
MODEL_NAME = re.compile(r"^\s*model\s+([A-Za-z_]\w*)\s*;", re.M)
ERROR_NOTE = re.compile(r"#\s*error:\s*(.+?)\s*$", re.M)
# stated results: "objective 81", "objective: -0.8", `"objective": 196200.0`, "status: optimal"
OBJECTIVE = re.compile(r"objective\W{0,4}?(-?\d+(?:\.\d+)?(?:[eE]-?\d+)?)(?!\w|\.\d)")
STATUS = re.compile(r"status\W{0,4}?(optimal|feasible|infeasible|unbounded)\b")
CLASS = re.compile(r"class: ([A-Z][A-Z-]*[A-Z])\b")
EXIT = re.compile(r"^\[exit status (\d+)\]$")
TIME = re.compile(r"time: [0-9.]+ s")


@dataclass
class Block:
    lang: str
    text: str
    line: int  # the opening fence's line, 1-based


@dataclass
class Example:
    model: Block
    data: Block | None = None
    extra_data: list[Block] = field(default_factory=list)
    stated: str = ""  # prose and outputs after the example: where its results are stated
    console: list[Block] = field(default_factory=list)
    python: list[Block] = field(default_factory=list)
    printed: dict[int, Block] = field(default_factory=dict)  # python block line -> its output

    @property
    def id(self) -> str:
        return f"line{self.model.line}"

    @property
    def name(self) -> str:
        found = MODEL_NAME.search(self.model.text)
        return found.group(1) if found else "example"

    def write(self, folder: Path) -> tuple[Path, Path | None]:
        """The model and its data files, named after the model, in `folder`."""
        model = folder / f"{self.name}.opt"
        model.write_text(self.model.text)
        data = None
        for block in ([self.data] if self.data else []) + self.extra_data:
            path = folder / f"{self.name}.{block.lang}"
            path.write_text(block.text)
            if block is self.data:
                data = path
        return model, data


def read_blocks(text: str) -> tuple[list[Block], list[str]]:
    """The fenced blocks, and the prose before each (one more entry: the prose at the end)."""
    blocks: list[Block] = []
    prose: list[str] = []
    lines = text.splitlines()
    current: list[str] = []
    i = 0
    while i < len(lines):
        opened = FENCE.match(lines[i])
        if not opened:
            current.append(lines[i])
            i += 1
            continue
        start = i
        i += 1
        body: list[str] = []
        while i < len(lines) and lines[i].rstrip() != "```":
            body.append(lines[i])
            i += 1
        assert i < len(lines), f"docs/language.md:{start + 1}: a code block is never closed"
        blocks.append(Block(opened.group(1), "\n".join(body) + "\n", start + 1))
        prose.append("\n".join(current))
        current = []
        i += 1
    prose.append("\n".join(current))
    return blocks, prose


def read_examples() -> tuple[list[Block], list[Example]]:
    blocks, prose = read_blocks(DOC.read_text())
    examples: list[Example] = []
    for k, block in enumerate(blocks):
        if block.lang in MODEL_LANGS:
            examples.append(Example(block))
            continue
        if not examples:
            continue
        latest = examples[-1]
        if block.lang in DATA_LANGS:
            right_after = blocks[k - 1] is latest.model and not prose[k].strip()
            if right_after:
                latest.data = block
            else:
                latest.extra_data.append(block)
        elif block.lang in ("console", "text"):
            latest.stated += block.text + "\n"
            if block.lang == "console":
                latest.console.append(block)
            elif blocks[k - 1].lang == "python" and not prose[k].strip():
                latest.printed[blocks[k - 1].line] = block
        elif block.lang == "python":
            latest.python.append(block)
    # the prose after an example, up to the next model block, states its results
    owner: Example | None = None
    for k, block in enumerate(blocks):
        if owner is not None:
            owner.stated += prose[k] + "\n"
        if block.lang in MODEL_LANGS:
            owner = next(e for e in examples if e.model is block)
    if owner is not None:
        owner.stated += prose[-1]
    return blocks, examples


BLOCKS, EXAMPLES = read_examples() if DOC.exists() else ([], [])
MODELS = [e for e in EXAMPLES if e.model.lang == "opt"]
ERRORS = [e for e in EXAMPLES if e.model.lang == "opt-error"]
WITH_CONSOLE = [(e, c) for e in EXAMPLES for c in e.console]
WITH_PYTHON = [(e, p) for e in EXAMPLES for p in e.python]


def test_the_doc_has_its_examples():
    assert DOC.exists(), "docs/language.md is missing"
    assert len(MODELS) >= 20
    assert len(ERRORS) >= 8
    assert WITH_CONSOLE and WITH_PYTHON


# ---------------------------------------------------------------------- data blocks
@pytest.mark.parametrize(
    "block", [b for b in BLOCKS if b.lang == "json"], ids=lambda b: f"line{b.line}"
)
def test_json_block_is_valid_json(block: Block):
    json.loads(block.text)


@pytest.mark.parametrize(
    "block", [b for b in BLOCKS if b.lang == "yaml"], ids=lambda b: f"line{b.line}"
)
def test_yaml_block_is_valid_yaml(block: Block):
    assert isinstance(yaml.safe_load(block.text), dict)


# ---------------------------------------------------------------------- models
def _exponent(number: str) -> int:
    parts = re.split("[eE]", number)
    return int(parts[1]) if len(parts) == 2 else 0


def check_objective(expected: str, actual: float | None, where: str) -> None:
    assert actual is not None, f"{where}: the doc states objective {expected}, there is none"
    # "81" means 81; "3.571429" means 3.571429 to the digits shown
    mantissa = re.split("[eE]", expected)[0]
    if "." in mantissa:
        tol = 0.51 * 10.0 ** -len(mantissa.split(".")[1]) * 10.0 ** _exponent(expected)
    else:
        tol = 1e-6 * max(1.0, abs(float(expected)))
    assert abs(actual - float(expected)) <= tol, (
        f"{where}: the doc states objective {expected}, the solver found {actual}"
    )


@pytest.mark.parametrize("example", MODELS, ids=lambda e: e.id)
def test_model_example(example: Example, tmp_path: Path):
    where = f"docs/language.md:{example.model.line}"
    model_path, data_path = example.write(tmp_path)
    model = dfl.load(model_path)
    klass = model.klass

    for name in CLASS.findall(example.stated):
        assert name == klass.name or name in klass.tags, (
            f"{where}: the doc says class {name}, the checker says {klass.label}"
        )

    objectives = OBJECTIVE.findall(example.stated)
    statuses = STATUS.findall(example.stated)
    if (objectives or statuses) and klass.name not in SOLVABLE:
        pytest.fail(f"{where}: the doc states a result for a {klass.name} model it can't solve")

    sources: list[object] = [data_path] if data_path else []
    sources += [tmp_path / f"{example.name}.{b.lang}" for b in example.extra_data]
    if not sources and (objectives or statuses):
        sources = [{}]  # a model without data
    for source in sources:
        instance = model.bind(source)
        instance.compile()
        if klass.name not in SOLVABLE:
            continue
        solution = instance.solve()
        for status in statuses:
            assert solution.status == status, f"{where}: {solution.status}, doc says {status}"
        if not statuses:
            assert solution.status == "optimal", f"{where}: {solution.status} ({source})"
        for value in objectives:
            check_objective(value, solution.objective, where)


@pytest.mark.parametrize("example", ERRORS, ids=lambda e: e.id)
def test_error_example(example: Example, tmp_path: Path):
    model_path, data_path = example.write(tmp_path)
    with pytest.raises(dfl.DflError) as raised:
        model = dfl.load(model_path)
        if data_path is not None:
            instance = model.bind(data_path)
            instance.compile()
            if model.klass.name in SOLVABLE:
                instance.solve()
    message = raised.value.format()
    for text in ERROR_NOTE.findall(example.model.text):
        assert text in message, f"docs/language.md:{example.model.line}: {message}"


# ---------------------------------------------------------------------- console and python
def normalize(line: str) -> str:
    return TIME.sub("time: _ s", line.rstrip())


def same_json(expected: str, actual_lines: list[str]) -> bool:
    want = json.loads(expected)
    for line in actual_lines:
        if line.startswith("{"):
            got = json.loads(line)
            keys = ("status", "objective", "variables")
            return all(want.get(k) == got.get(k) for k in keys)
    return False


def block_id(value: object) -> str:
    """Name console and python cases by their own block's line; the example goes unnamed."""
    return f"line{value.line}" if isinstance(value, Block) else "doc"


def run_dfl(command: str, cwd: Path) -> subprocess.CompletedProcess:
    argv = shlex.split(command)
    assert argv[0] == "dfl", f"console commands run `dfl`: {command}"
    env = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "NO_COLOR")}
    env.update(COLUMNS="80", LINES="50", TERM="dumb")
    return subprocess.run(
        [sys.executable, "-m", "dfl_dsl.cli", *argv[1:]],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def console_steps(block: Block) -> list[tuple[str, list[str], int]]:
    """(command, expected output lines, expected exit status) for each `$ ` line."""
    steps: list[tuple[str, list[str], int]] = []
    for line in block.text.splitlines():
        if line.startswith("$ "):
            steps.append((line[2:], [], 0))
        elif (found := EXIT.match(line.strip())) and steps:
            command, out, _ = steps[-1]
            steps[-1] = (command, out, int(found.group(1)))
        elif steps:
            steps[-1][1].append(line)
    return steps


@pytest.mark.parametrize(("example", "block"), WITH_CONSOLE, ids=block_id)
def test_console_example(example: Example, block: Block, tmp_path: Path):
    example.write(tmp_path)
    for command, expected, status in console_steps(block):
        done = run_dfl(command, tmp_path)
        actual = [normalize(x) for x in (done.stdout + done.stderr).splitlines()]
        where = f"docs/language.md:{block.line}: `{command}`"
        assert done.returncode == status, f"{where}: exit {done.returncode}\n{done.stderr}"
        at = 0
        for line in expected:
            want = normalize(line)
            if not want or want == "..." or "backends:" in want:
                continue  # "...": output left out; the installed backends change
            if want.startswith("{"):
                assert same_json(want, actual), f"{where}: JSON differs:\n" + "\n".join(actual)
                continue
            try:
                at = actual.index(want, at) + 1
            except ValueError:
                pytest.fail(f"{where}: no line\n{want}\nin the output\n" + "\n".join(actual))


@pytest.mark.parametrize(("example", "block"), WITH_PYTHON, ids=block_id)
def test_python_example(example: Example, block: Block, tmp_path: Path, monkeypatch, capsys):
    example.write(tmp_path)
    monkeypatch.chdir(tmp_path)
    code = compile(block.text, f"docs/language.md:{block.line}", "exec")
    exec(code, {"__name__": "__doc_example__"})
    printed = example.printed.get(block.line)
    if printed is not None:
        out = [line.rstrip() for line in capsys.readouterr().out.strip().splitlines()]
        assert out == [line.rstrip() for line in printed.text.strip().splitlines()]
