"""Running a solve so that Ctrl-C stops `dfl` at once.

HiGHS (and the solvers under Pyomo and CVXPY) run in C and never return to Python's signal
check until they finish: Ctrl-C during a MILP waited for the whole solve, minutes or hours,
before `dfl` could say "interrupted". Run in a worker thread (the solvers release the GIL),
the solve leaves the main thread free to take the KeyboardInterrupt within 0.1 s. The worker
can't be stopped, and the interpreter's normal exit would run while a C++ solver's threads
still work (HiGHS then aborts: "terminate called without an active exception"), so the CLI
leaves by `leave_now` once it has said so. Outputs are written by the main thread after the
solve, so an interrupted solve has written nothing.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

# the worker's stack: a thread's default is the platform's (2 MiB where `ulimit -s` is
# unlimited), less than the main thread's; compiling deep models recurses
_STACK = 256 * 1024 * 1024
# one event per solve, set when its worker is done (a Thread's is_alive() can't be trusted
# after a KeyboardInterrupt cut its join short: CPython then marks it stopped)
_running: list[threading.Event] = []


def interruptible(work: Callable[[], T]) -> T:
    """`work()`'s value (or its exception), computed in a worker thread while this thread
    waits in short, interruptible steps."""
    box: dict = {}
    done = threading.Event()

    def run() -> None:
        try:
            box["value"] = work()
        except BaseException as exc:  # handed to the waiting thread, raised there
            box["error"] = exc
        finally:
            done.set()

    _running.append(done)
    try:
        previous = threading.stack_size(_STACK)
    except (ValueError, RuntimeError):  # a platform that sets no thread's stack size
        previous = None
    try:
        threading.Thread(target=run, name="dfl-solve", daemon=True).start()
    finally:
        if previous is not None:
            threading.stack_size(previous)
    while not done.wait(0.1):
        pass
    _running.remove(done)
    if "error" in box:
        raise box["error"]
    return box["value"]


def leave_now(status: int) -> None:
    """Exit with `status` at once, without the interpreter's shutdown, if a solve is still
    running in a worker (see the module's docstring); else return."""
    if not all(done.is_set() for done in _running):
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        os._exit(status)
