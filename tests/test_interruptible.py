"""A solve in a worker thread: its value and errors come through, and Ctrl-C stops `dfl` while
the solver is still in C code."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest
from _helpers import spec_dir

from dfl_dsl.errors import DflError
from dfl_dsl.interruptible import interruptible


def test_the_value_and_the_error_come_through() -> None:
    assert interruptible(lambda: 41 + 1) == 42

    def fails():
        raise DflError("bad data")

    with pytest.raises(DflError, match="bad data"):
        interruptible(fails)


def test_deep_recursion_fits_the_workers_stack() -> None:
    def depth(n: int) -> int:
        return 0 if n == 0 else 1 + depth(n - 1)

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(20000)
    try:
        assert interruptible(lambda: depth(15000)) == 15000
    finally:
        sys.setrecursionlimit(limit)


# the solve replaced by C code that never checks for signals and releases the GIL, as HiGHS's
# MIP solve: a matrix product
SLOW_SOLVE = """
import signal, sys, numpy as np, dfl_dsl.bound as b
signal.signal(signal.SIGINT, signal.default_int_handler)  # (ignored when run in background)
marker = sys.argv.pop()
def solve(*args, **kwargs):
    open(marker + ".started", "w").close()
    a = np.random.default_rng(0).random((5000, 5000))
    a @ a
    raise SystemExit("the solve ran to its end")
b.BoundInstance.solve = solve
from dfl_dsl.cli import main
sys.exit(main())
"""


def test_ctrl_c_stops_a_solve_in_c_at_once(tmp_path) -> None:
    """Ctrl-C waited for HiGHS to finish (11-15 s on a bin-packing MILP, minutes or hours on
    a big one); now `dfl: interrupted`, exit 130, at once, no --output written, and no
    C++ abort from the interpreter's exit while the solver's threads work."""
    out, marker = tmp_path / "sol.json", str(tmp_path / "m")
    argv = [sys.executable, "-c", SLOW_SOLVE, "solve", str(spec_dir() / "transport.opt"),
            "--data", str(spec_dir() / "transport.json"), "--output", str(out), marker]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env)
    deadline = time.monotonic() + 60
    while not os.path.exists(marker + ".started"):
        assert time.monotonic() < deadline, "the solve never started"
        time.sleep(0.05)
    time.sleep(0.3)
    sent = time.monotonic()
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert time.monotonic() - sent < 2.0, "waited for the solve"
    assert "dfl: interrupted" in err and "terminate" not in err and "Traceback" not in err
    assert not out.exists()
