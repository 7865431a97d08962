"""Property-based fuzzing of the AMPL side: mutated .mod models (with their .dat), mutated .dat
files (tokens, truncation, table headers, `:=` and `;`, widths, huge numbers, `.`) and `dfl
data FILE.dat --to json` on them must end in a compiled model (a JSON file that binds as the
.dat does) or a located `DflError` (exit 2 and no output file) -- never another exception,
never a hang. The inputs and judges live in `_fuzz_ampl.py`; benchmarks/fuzz.py --kinds
ampl,dat,convert runs them by the ten thousand (docs/reliability.md)."""

from __future__ import annotations

import os
import random

import pytest
from _fuzz import Crash, Mismatch
from _fuzz_ampl import (
    ampl_cases,
    ampl_front_end,
    convert_input,
    convert_judge,
    mutated_dat,
    mutated_mod,
)
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

CASES = ampl_cases()
# DFL_FUZZ_AMPL=20000 fuzzes longer (the default keeps this file near 10 s)
AMPL = settings(
    max_examples=int(os.environ.get("DFL_FUZZ_AMPL", "300")),
    deadline=10_000,  # ms: a read, bind or compile that hangs is a failure
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def _story(finding: AssertionError, *parts) -> AssertionError:
    shown = "\n".join(f"--- input ---\n{part!s:.3000}" for part in parts)
    return AssertionError(f"{type(finding).__name__}: {finding}\n{shown}")


@pytest.mark.parametrize("mutated", [mutated_mod, mutated_dat], ids=["mod", "dat"])
@AMPL
@given(rng=st.randoms(use_true_random=False))
def test_mutated_ampl_models_and_dat_files_through_the_front_end(mutated,
                                                                 rng: random.Random) -> None:
    """A mutated .mod with its .dat, or a .mod with a mutated .dat: read, bind, compile."""
    mod, dat = mutated(rng, CASES)
    try:
        event(ampl_front_end(mod, dat))
    except Crash as crash:
        raise _story(crash, mod, dat) from crash


@AMPL
@given(st.randoms(use_true_random=False))
def test_converting_mutated_dat_files_is_atomic(rng: random.Random) -> None:
    case = convert_input(rng, CASES)
    try:
        event(convert_judge(case))
    except (Crash, Mismatch) as finding:
        raise _story(finding, case.mod, case.dat) from finding
