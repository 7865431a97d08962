"""The `dfl` command: exit 0 / 1 (no solution) / 2 (user error), `--json`, `--output`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from _helpers import SPEC, spec_dir
from typer.testing import CliRunner

from dfl_dsl.cli import app

runner = CliRunner()
EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def _err(result) -> str:
    """stderr with rich's line wrapping (at 80 columns off a terminal) undone."""
    return result.stderr.replace("\n", "")


def _spec_models():
    if not SPEC.is_dir():
        return [pytest.param("missing", marks=pytest.mark.skip("no shared/spec"))]
    return sorted(p.stem for p in SPEC.glob("*.opt") if (SPEC / f"{p.stem}.json").is_file())


@pytest.mark.parametrize("name", _spec_models())
def test_check_every_spec_model_with_its_data(name):
    spec = spec_dir()
    result = runner.invoke(app, ["check", str(spec / f"{name}.opt"), "--data",
                                 str(spec / f"{name}.json")])
    assert result.exit_code == 0, result.output
    assert "class:" in result.stdout and "instance:" in result.stdout


def test_check_without_data():
    result = runner.invoke(app, ["check", str(spec_dir() / "transport.opt")])
    assert result.exit_code == 0 and "from data" in result.stdout


@pytest.fixture()
def lp(tmp_path):
    model = tmp_path / "lp.opt"
    model.write_text("set I; param c{I}; var x{I} in [0, 1];\n"
                     "maximize f: sum{i in I} c[i] * x[i];\n"
                     "subject to one: sum{i in I} x[i] <= 1;\n")
    data = tmp_path / "lp.json"
    data.write_text(json.dumps({"I": ["a", "b"], "c": [2, 3]}))
    return model, data


def test_solve_json_and_output(lp, tmp_path):
    model, data = lp
    out = tmp_path / "deep" / "sol.json"
    result = runner.invoke(app, ["solve", str(model), "--data", str(data), "--json",
                                 "--output", str(out)])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert payload["status"] == "optimal" and payload["objective"] == pytest.approx(3)
    assert payload["variables"] == {"x": {"a": 0.0, "b": 1.0}}
    assert payload["backend"] == "highs" and payload["time_s"] >= 0
    assert json.loads(out.read_text()) == payload


AMPL_SPELLINGS = """/* A knapsack as AMPL users write it: block comments, single quotes,
   **, a..b by k, mod and div, if without else, exists/forall, prod, :=, ordered by. */
set ALL = 1..8;
set I ordered by ALL;
set ODD = 1..8 by 2;
param kind{I} symbolic;
param w{i in I} = 1 + (3 * i) mod 5;
param bonus{i in I} = if kind[i] = 'heavy' then 2;
param scale = prod{i in I: i div 4 = 0} 1.5;
check: forall{i in I} w[i] >= 1 and exists{j in ODD} j = i;
var take{I} binary, := 0;
maximize value: sum{i in I} (w[i]**2 + bonus[i]) * scale * take[i];
subject to cap: sum{i in I} w[i] * take[i] <= 7;
subject to one_light: sum{i in I: kind[i] = 'light'} take[i] <= 1;
data;
set I := 7 3 5 1;
param kind := 1 'heavy' 3 light 5 'heavy' 7 light;
"""


def test_ampl_spellings_solve_unchanged(tmp_path):
    """A model file in AMPL's spellings, data after `data;`, against subsets enumerated here."""
    import itertools

    model = tmp_path / "knap.mod"
    model.write_text(AMPL_SPELLINGS)
    result = runner.invoke(app, ["solve", str(model), "--json"])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    items = [1, 3, 5, 7]  # I's data (7 3 5 1) in ALL's order
    assert list(payload["variables"]["take"]) == [str(i) for i in items]
    w = {i: 1 + (3 * i) % 5 for i in items}
    bonus = {1: 2, 3: 0, 5: 2, 7: 0}
    scale = 1.5 ** sum(1 for i in items if i // 4 == 0)
    best = max(sum((w[i] ** 2 + bonus[i]) * scale for i in pick)
               for r in range(5) for pick in itertools.combinations(items, r)
               if sum(w[i] for i in pick) <= 7 and len({3, 7} & set(pick)) <= 1)
    assert payload["objective"] == pytest.approx(best)


def test_a_run_script_tail_is_not_run_and_says_so(tmp_path):
    model = tmp_path / "scripted.mod"
    model.write_text("var x >= 1;\nminimize o: x;\nsolve;\ndisplay x;\nprintf \"%g\\n\", x;\n")
    result = runner.invoke(app, ["solve", str(model), "--json"])
    assert result.exit_code == 0 and json.loads(result.stdout)["objective"] == 1
    assert _err(result).strip() == (
        f"{model}:4:1: warning: 2 output statements after `solve;` are not run (display 1, "
        "printf 1): `dfl solve` prints the solution (`--json` or `--output` for every value)")


def test_ampl_commands_in_a_model_file_exit_2(tmp_path):
    model = tmp_path / "scripted.mod"
    model.write_text("var x >= 1;\nminimize o: x;\nsolve;\nlet x := 2;\nsolve;\n")
    result = runner.invoke(app, ["solve", str(model)])
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert f"{model}:4:1: error: `let` after `solve;` would change the model" in _err(result)
    assert "run `dfl solve` once per variant" in _err(result)


def test_objective_picks_one_of_several(tmp_path):
    model = tmp_path / "two.opt"
    model.write_text("set I; param c{I}; var x{I} in [0, 1];\n"
                     "maximize most: sum{i in I} c[i] * x[i];\n"
                     "minimize least: sum{i in I} c[i] * x[i] + 1;\n")
    data = tmp_path / "d.json"
    data.write_text(json.dumps({"I": ["a", "b"], "c": [2, 3]}))
    args = ["solve", str(model), "--data", str(data), "--json"]
    first = json.loads(runner.invoke(app, args).stdout)
    assert first["objective_name"] == "most" and first["objective"] == pytest.approx(5)
    named = json.loads(runner.invoke(app, [*args, "--objective", "least"]).stdout)
    assert named["objective_name"] == "least" and named["objective"] == pytest.approx(1)
    checked = runner.invoke(app, ["check", str(model), "--objective", "least"])
    assert "objective: minimize least  (also declared: most" in checked.stdout
    assert "checked PSD" not in checked.stdout
    wrong = runner.invoke(app, [*args, "--objective", "lest"])
    assert wrong.exit_code == 2 and "Traceback" not in wrong.output
    assert "no objective `lest` (its objectives: `most`, `least`)" in _err(wrong)
    assert "did you mean `least`?" in _err(wrong)


def test_a_nonconvex_product_objective_exits_2_at_bind(tmp_path):
    model = tmp_path / "q.opt"
    model.write_text("set S; param q{S, S}; var x{S} in [0, 1];\n"
                     "minimize o: sum{i in S, j in S} q[i, j] * x[i] * x[j];\n")
    data = tmp_path / "q.json"
    data.write_text(json.dumps({"S": [1, 2], "q": [[1, 3], [3, 1]]}))
    checked = runner.invoke(app, ["check", str(model)])
    assert checked.exit_code == 0 and "its Q is checked PSD at bind" in " ".join(
        checked.stdout.split())
    for command in ("check", "solve"):
        result = runner.invoke(app, [command, str(model), "--data", str(data)])
        assert result.exit_code == 2 and "Traceback" not in result.output
        assert (f"{model}:2:13: error: objective `o` is not convex: the Q of its products of "
                "variables has a negative eigenvalue (the smallest is -2)") in _err(result)


def test_solve_prints_a_table(lp):
    model, data = lp
    result = runner.invoke(app, ["solve", str(model), "--data", str(data), "-b", "cvxpy"])
    assert result.exit_code == 0, result.output
    assert "optimal" in result.stdout and "x[b]" in result.stdout


def test_infeasible_exits_1_with_the_iis_and_writes_nothing(tmp_path):
    model = tmp_path / "inf.opt"
    model.write_text("var x >= 0; var y >= 0; minimize f: x + y;\n"
                     "subject to enough: x + y >= 5;\nsubject to small: x + 2 * y <= 3;\n")
    out = tmp_path / "sol.json"
    result = runner.invoke(app, ["solve", str(model), "--output", str(out)])
    assert result.exit_code == 1
    assert "infeasible" in _err(result) and "enough" in _err(result)
    assert not out.exists()
    result = runner.invoke(app, ["solve", str(model), "--json", "--output", str(out)])
    assert result.exit_code == 1 and json.loads(result.stdout)["status"] == "infeasible"
    assert not out.exists()


def test_unbounded_exits_1(tmp_path):
    model = tmp_path / "unb.opt"
    model.write_text("var x integer; minimize f: x;")
    result = runner.invoke(app, ["solve", str(model), "--json"])
    assert result.exit_code == 1 and json.loads(result.stdout)["status"] == "unbounded"


@pytest.mark.parametrize(("args", "message"), [
    (["--time-limit", "0"], "--time-limit must be positive"),
    (["--time-limit", "nan"], "--time-limit must be positive"),
    (["--backend", "nonsense"], "unknown backend `nonsense`"),
])
def test_bad_options_exit_2(lp, tmp_path, args, message):
    model, data = lp
    out = tmp_path / "sol.json"
    result = runner.invoke(app, ["solve", str(model), "--data", str(data), "--output", str(out),
                                 *args])
    assert result.exit_code == 2 and message in _err(result)
    assert not out.exists() and "Traceback" not in result.output
    assert "<input>" not in _err(result)  # an option error names the file or just `dfl`


def test_an_output_path_that_cant_be_written_exits_2_before_solving(lp, tmp_path):
    model, data = lp
    (tmp_path / "afile").write_text("")
    for out, message in ((tmp_path, "is a folder"), (tmp_path / "afile" / "sol.json",
                                                      "is a file, not a folder")):
        result = runner.invoke(app, ["solve", str(model), "--data", str(data), "-o", str(out)])
        assert result.exit_code == 2 and message in _err(result), result.output
        assert "status" not in result.stdout and "Traceback" not in result.output


def test_an_output_over_an_input_exits_2_and_keeps_the_input(lp, tmp_path):
    model, data = lp
    before = data.read_text()
    result = runner.invoke(app, ["solve", str(model), "--data", str(data), "-o", str(data)])
    assert result.exit_code == 2 and "would overwrite --data" in _err(result)
    assert data.read_text() == before and "status" not in result.stdout


def test_a_solve_error_starts_stderr_with_its_position(tmp_path):
    """Off a terminal the solve spinner draws nothing, not even the newline rich's transient
    display ends with, so stderr's first line is `FILE:LINE:COL: error:` (a real process:
    CliRunner's streams don't show it)."""
    model = tmp_path / "e.opt"
    model.write_text('set I;\nvar x{I} >= 0;\nminimize o: sum{i in I} x[i];\n'
                     's.t. a: x["zz"] <= 1;\n')
    data = tmp_path / "d.json"
    data.write_text(json.dumps({"I": ["a"]}))
    run = subprocess.run([sys.executable, "-c", "from dfl_dsl.cli import app; app()", "solve",
                          str(model), "--data", str(data)], capture_output=True, text=True)
    assert run.returncode == 2 and run.stderr.startswith(f"{model}:4:9: error:"), run.stderr


def test_model_errors_exit_2_with_a_caret(tmp_path):
    model = tmp_path / "bad.opt"
    model.write_text("set I;\nvar x{I} >= 0;\nminimize f: sum{i in I} wieght[i] * x[i];\n")
    out = tmp_path / "sol.json"
    result = runner.invoke(app, ["solve", str(model), "--data", str(model), "-o", str(out)])
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert f"{model}:3:" in _err(result) and "^" in _err(result)
    assert not out.exists()


def test_compile_errors_exit_2(tmp_path):
    model = tmp_path / "m.opt"
    model.write_text("set I; var x{I} >= 0;\nminimize f: sum{i in I} i * x[i];\n")
    data = tmp_path / "d.json"
    data.write_text(json.dumps({"I": ["a", "b"]}))
    for command in ("check", "solve"):
        result = runner.invoke(app, [command, str(model), "--data", str(data)])
        assert result.exit_code == 2, result.output
        assert f"{model}:2:" in _err(result) and "string elements" in _err(result)


def test_missing_files_exit_2(tmp_path, lp):
    model, _ = lp
    result = runner.invoke(app, ["check", str(tmp_path / "nope.opt")])
    assert result.exit_code == 2 and "can't read model file" in _err(result)
    result = runner.invoke(app, ["solve", str(model), "--data", str(tmp_path / "nope.json")])
    assert result.exit_code == 2 and "data file not found" in _err(result)


def test_backend_that_does_not_accept_the_class_exits_2(tmp_path):
    model = tmp_path / "socp.opt"
    model.write_text("var x[2]; minimize f: norm2(x); subject to c: sum(x) == 1;")
    result = runner.invoke(app, ["solve", str(model), "--backend", "highs"])
    assert result.exit_code == 2 and "doesn't accept an SOCP model" in _err(result)
    result = runner.invoke(app, ["solve", str(model), "--json"])
    assert result.exit_code == 0
    assert json.loads(result.stdout)["objective"] == pytest.approx(0.5**0.5, rel=1e-6)


def test_a_misspelled_data_key_is_a_located_warning(tmp_path):
    model, data = tmp_path / "m.opt", tmp_path / "d.json"
    model.write_text("param lo default 0;\nvar x >= lo;\nminimize c: x;\n")
    data.write_text('{\n  "low": 5\n}\n')
    result = runner.invoke(app, ["solve", str(model), "--data", str(data), "--json"])
    assert result.exit_code == 0
    assert json.loads(result.stdout)["objective"] == 0.0  # `lo` took its default
    assert f"{data}:2:3: warning: the model has no set or param `low`" in _err(result)
    assert "did you mean `lo`?" in _err(result)
    assert "DataWarning" not in _err(result)  # printed as written, not as Python's warning


def test_no_solution_message_for_a_solver_that_stopped_without_one():
    from types import SimpleNamespace

    from dfl_dsl.cli import _no_solution_message

    stopped = SimpleNamespace(status="error", message="Time limit reached", extra={})
    assert _no_solution_message(stopped) == (
        "no solution: the solver stopped without a feasible point (Time limit reached)")
    limited = SimpleNamespace(status="time_limit", message="FlexQP ADMM, 3 iterations",
                              extra={})
    assert _no_solution_message(limited) == ("no solution: the solver stopped without a "
                                              "feasible point (FlexQP ADMM, 3 iterations)")
    infeasible = SimpleNamespace(status="infeasible", message="", extra={"iis": ["a", "b"]})
    assert _no_solution_message(infeasible) == (
        "no solution: the problem is infeasible\nan irreducible infeasible subset of rows: a, b")


def test_solve_output_tables_and_nonzeros(lp, tmp_path):
    model, data = lp
    out = tmp_path / "sol.npz"
    result = runner.invoke(app, ["solve", str(model), "--data", str(data), "--json",
                                 "--nonzeros", "--output", str(out)])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["variables"] == {"x": {"b": 1.0}}
    import numpy as np

    arrays = np.load(out)
    assert arrays["x.I"].tolist() == ["b"] and arrays["x.value"].tolist() == [1.0]


ENTRY_POINTS = {  # the console script's (fast path for plain commands) and typer's own
    "main": "import sys; from dfl_dsl.cli import main; sys.exit(main())",
    "app": "from dfl_dsl.cli import app; app()",
}


def _first_line_then_close(args: list[str], entry: str) -> subprocess.CompletedProcess:
    """`dfl ARGS | head -1`: the reader takes one line and goes away."""
    run = subprocess.Popen([sys.executable, "-c", ENTRY_POINTS[entry], *args],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    run.stdout.readline()
    run.stdout.close()
    stderr = run.stderr.read().decode()
    return subprocess.CompletedProcess(args, run.wait(timeout=600), "", stderr)


@pytest.mark.parametrize("args", [
    ["--help"], ["solve", "--help"], ["check", "{spec}/transport.opt"],
    ["solve", "{spec}/transport.opt", "-d", "{spec}/transport.json"],
    ["solve", "{spec}/transport.opt", "-d", "{spec}/transport.json", "--json"],
    ["generate", "shortest_path", "--out", "{tmp}/g.npz", "--num-data", "20"],
])
@pytest.mark.parametrize("entry", ENTRY_POINTS)
def test_a_reader_that_goes_away_is_success_and_silent(args, entry, tmp_path):
    # `solve | head -1` exited 1 silently, `train --json | head` with an internal error (3)
    spec = spec_dir()
    run = _first_line_then_close([a.format(spec=spec, tmp=tmp_path) for a in args], entry)
    assert run.returncode == 0 and run.stderr == "", run.stderr


def test_train_json_to_a_reader_that_went_away(tmp_path):
    data, train = tmp_path / "i.json", tmp_path / "t.npz"
    made = subprocess.run([sys.executable, "-c", "from dfl_dsl.cli import app; app()",
                           "generate", "shortest_path", "--out", str(train), "--instance",
                           str(data), "--num-data", "40"], capture_output=True)
    assert made.returncode == 0, made.stderr
    model = EXAMPLES / "shortest_path" / "shortest_path.opt"
    run = subprocess.Popen([sys.executable, "-c", ENTRY_POINTS["main"], "train",
                            str(model), "--data", str(data), "--train", str(train), "--epochs",
                            "1", "--json"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    run.stdout.close()  # gone before the JSON is printed
    assert run.wait(timeout=600) == 0 and b"Error" not in run.stderr.read()


def test_a_full_output_device_exits_2(lp):
    result = CliRunner().invoke(app, ["solve", str(lp[0]), "--data", str(lp[1]), "--output",
                                      "/dev/full"])
    assert result.exit_code == 2
    assert "can't write `/dev/full`: No space left on device" in _err(result)


def test_generate_too_many_samples_is_refused_up_front(tmp_path):
    # --num-data 100000000000 was an internal MemoryError (3.6 TiB)
    result = CliRunner().invoke(app, ["generate", "knapsack", "--out", str(tmp_path / "k.npz"),
                                      "--num-data", "100000000000"])
    assert result.exit_code == 2 and "would have 6,900,000,000,000 entries" in _err(result)
    assert list(tmp_path.iterdir()) == []


def test_library_warnings_are_one_line_without_internal_source(lp, monkeypatch):
    import numpy as np

    import dfl_dsl.check_report

    real = dfl_dsl.check_report.report

    def warns(*args, **kwargs):
        np.float64(1.0) / np.float64(0.0)  # numpy's RuntimeWarning, from inside the library
        return real(*args, **kwargs)

    monkeypatch.setattr(dfl_dsl.check_report, "report", warns)
    result = CliRunner().invoke(app, ["check", str(lp[0])])
    assert result.exit_code == 0, result.output
    assert "dfl: warning: RuntimeWarning: divide by zero" in _err(result)
    assert ".py:" not in result.stderr and "np.float64" not in result.stderr


def test_an_error_in_a_long_line_shows_a_window_around_its_column(tmp_path):
    model = tmp_path / "long.opt"
    model.write_text("var x;\n" + " ".join(f"var y{k};" for k in range(5000)) + " minimize f: "
                     "oops; var z;\n")  # one 50 KB line
    result = CliRunner().invoke(app, ["check", str(model)])
    assert result.exit_code == 2
    source_line, caret = result.stderr.splitlines()[1:3]
    assert len(source_line) < 120 and source_line.startswith("    ...")
    assert source_line[caret.index("^"):].startswith("oops")


def test_a_full_disk_during_generate_is_exit_2_with_no_file(tmp_path, monkeypatch):
    def disk_full(handle, **arrays):
        handle.write(b"PK partial")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("dfl_dsl.learn.session.np.savez", disk_full)
    result = CliRunner().invoke(app, ["generate", "knapsack", "--out", str(tmp_path / "k.npz"),
                                      "--num-data", "10"])
    assert result.exit_code == 2 and "No space left on device" in _err(result)
    assert list(tmp_path.iterdir()) == []


def test_running_out_of_memory_is_a_user_error(lp, monkeypatch):
    def too_big(*args, **kwargs):
        raise MemoryError

    monkeypatch.setattr("dfl_dsl.model.Model.bind", too_big)
    result = CliRunner().invoke(app, ["solve", str(lp[0]), "--data", str(lp[1])])
    assert result.exit_code == 2 and _err(result).startswith("dfl: error: out of memory")


def test_no_solution_through_the_console_entry_is_still_exit_1():
    """Only a reader that went away turns an exit 1 into success."""
    spec = spec_dir()
    run = subprocess.run([sys.executable, "-c", ENTRY_POINTS["main"], "solve",
                          str(spec / "qp.opt"), "--data", str(spec / "qp_infeasible.json")],
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 1 and "no solution: the problem is infeasible" in run.stderr


@pytest.mark.parametrize("via", ["main", "app"])
def test_ctrl_c_exits_130_and_writes_nothing(tmp_path, via):
    """Ctrl-C mid-solve was "Aborted!", exit 1 — the status that means "no solution", so a
    script read an interrupted run as an infeasible model. Now 130 (128 + SIGINT), as shells
    report it, and no --output file."""
    model, data = spec_dir() / "transport.opt", spec_dir() / "transport.json"
    out = tmp_path / "sol.json"
    code = (f"import sys; import dfl_dsl.bound as b\n"
            f"def stop(*a, **k): raise KeyboardInterrupt\n"
            f"b.BoundInstance.solve = stop\n{ENTRY_POINTS[via]}")
    run = subprocess.run([sys.executable, "-c", code, "solve", str(model), "--data", str(data),
                          "--output", str(out)], capture_output=True, text=True)
    assert run.returncode == 130, run.stderr
    assert "dfl: interrupted" in run.stderr and "Traceback" not in run.stderr
    assert not out.exists()
