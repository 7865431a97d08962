"""The long fuzz run: the inputs of tests/test_fuzz.py by the hundred thousand, counted.

Each input is made from its own seed (reproducible: `--replay KIND SEED` runs one again and
prints it), in a fixed rotation of kinds, eighteen inputs to a round:

    text      3   a spec, example or seed model's text mutated by tokens, characters and
                  lines (tests/_fuzz.py: mutate), then parse + check
    pipeline  4   a spec or example model with its data, the model text, the data values or
                  the JSON text mutated, then load -> check -> bind -> compile
    solved    2   a pipeline input that compiles, solved by the backend `auto` picks and,
                  for an LP, MILP or QP, by HiGHS and by CVXPY, compared (as `solve`)
    soup      1   a random run of keywords, punctuation and words, then parse + check
    solve     2   a generated small LP / MILP / QP solved by HiGHS and by CVXPY, the statuses
                  and objectives compared (1e-5 relative; 1e-4 for MILPs)
    ampl      2   a tests/ampl/models/*.mod with its text mutated, and its .dat, through
                  load -> check -> bind -> compile (tests/_fuzz_ampl.py)
    dat       2   a model's .dat (or `data;` part) mutated: tokens, characters, lines,
                  truncation, table headers, `:=` / `;`, row and tuple widths, huge numbers,
                  `.`, `default`, statements repeated; then read with the model + bind
    convert   1   `dfl data FILE.dat --to json --out OUT` (in this process) on a mutated .dat:
                  exit 0 and a JSON mapping that binds as the .dat does (with --model), or
                  exit 2, a located error, and no output file (or the old one unchanged)
    train     1   `dfl train` (or `dfl eval` of a damaged checkpoint) in this process on an
                  example with a small generated data set, its arrays, files, options or
                  instance data mutated (tests/_fuzz_train.py): exit 0 with a finite regret
                  or 1, or exit 2 with a located error and the --save file as it was

--kinds picks some (`--kinds ampl,dat,convert`): the rotation keeps their shares and order.

Outcomes: `ok` (checked, compiled or both solved alike), `clean error` (a DflError naming its
file, and a line within it when it has one; for `solve`, a backend refusing the model's
class), `crash` (any other exception, an error without its file, or the worker process
dying), `hang` (over --timeout seconds: a timer interrupts the input; one stuck in C code,
where no timer reaches, is killed with its worker process after 60 s more, and a new worker
goes on from the next input), `mismatch` (HiGHS and CVXPY disagree; a .dat and its JSON
conversion bind differently). Inputs are judged with the size cap at 1,000,000 entries
(tests/_fuzz.py): a mutated size just under the default cap binds for minutes, legitimately.
Prints the counts per kind, the load average, and the first findings with their seeds;
--report writes them as JSON.

    nice -n 19 python benchmarks/fuzz.py [--inputs 100000] [--seed 0] [--report fuzz.json]

Exits 1 when there is any crash, hang or mismatch. Not run in CI.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import random
import signal
import sys
import time
from collections import Counter
from pathlib import Path

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

import torch  # noqa: E402
from _common import table  # noqa: E402
from _fuzz import (  # noqa: E402
    VOCAB,
    Crash,
    Mismatch,
    cases,
    cross_check,
    front_end,
    mutate,
    mutated_case,
    random_model,
    random_ops,
    solved_case,
)
from _fuzz_ampl import (  # noqa: E402
    ampl_cases,
    ampl_front_end,
    convert_input,
    convert_judge,
    mutated_dat,
    mutated_mod,
)
from _fuzz_train import train_input, train_judge  # noqa: E402

ALL = (["text"] * 3 + ["pipeline"] * 4 + ["solved"] * 2 + ["soup"] + ["solve"] * 2 + ["ampl"] * 2
       + ["dat"] * 2 + ["convert"] + ["train"])
ROTATION = list(ALL)  # (--kinds narrows it)
OUTCOMES = ["ok", "clean error", "crash", "hang", "mismatch"]


class Hang(BaseException):  # (not an Exception: the judges catch those)
    pass


def make_input(kind: str, seed: int, corpus, texts):
    """The input of `kind` for `seed` (the judge's arguments), and the function that judges
    it. (`corpus` is the spec's and examples' cases and the AMPL models', in a pair.)"""
    rng = random.Random(f"{kind}:{seed}")
    cases_opt, cases_ampl = corpus
    if kind == "text":
        return (mutate(rng.choice(texts), random_ops(rng), texts), None), front_end
    if kind == "pipeline":
        return mutated_case(rng, cases_opt), front_end
    if kind == "solved":
        return mutated_case(rng, cases_opt), solved_case
    if kind == "soup":
        return (" ".join(rng.choice(VOCAB) for _ in range(rng.randint(0, 60))), None), front_end
    if kind == "ampl":
        return mutated_mod(rng, cases_ampl), ampl_front_end
    if kind == "dat":
        return mutated_dat(rng, cases_ampl), ampl_front_end
    if kind == "convert":
        return (convert_input(rng, cases_ampl),), convert_judge
    if kind == "train":
        return (train_input(rng),), train_judge
    return random_model(rng), cross_check


def judge(kind: str, seed: int, corpus, texts, timeout: float) -> tuple[str, str]:
    """(outcome, detail) of one input."""
    args, check = make_input(kind, seed, corpus, texts)
    signal.setitimer(signal.ITIMER_REAL, timeout)
    try:
        word = check(*args)
    except Hang:
        return "hang", f"over {timeout:g} s"
    except Crash as crash:
        return "crash", str(crash)[:500]
    except Mismatch as mismatch:
        return "mismatch", str(mismatch)[:500]
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    return ("ok" if word in ("ok", "agree") else "clean error"), word


def _on_alarm(signum, frame):
    raise Hang()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--inputs", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=0, help="the first input's seed")
    parser.add_argument("--timeout", type=float, default=30.0, help="seconds per input")
    parser.add_argument("--report", type=Path, help="write counts and findings as JSON here")
    parser.add_argument("--replay", nargs=2, metavar=("KIND", "SEED"),
                        help="print one input and its outcome")
    parser.add_argument("--kinds", default=",".join(dict.fromkeys(ALL)),
                        help="the kinds to run, comma-separated (default: all)")
    args = parser.parse_args(argv)
    kinds = args.kinds.split(",")
    if unknown := set(kinds) - set(ALL):
        parser.error(f"unknown kinds: {', '.join(sorted(unknown))}")
    ROTATION[:] = [kind for kind in ALL if kind in kinds]
    opt_cases = cases()
    corpus, texts = (opt_cases, ampl_cases()), [case.text for case in opt_cases]
    if args.replay:
        _set_up()
        kind, seed = args.replay[0], int(args.replay[1])
        for part in make_input(kind, seed, corpus, texts)[0]:
            print(part)
        print(judge(kind, seed, corpus, texts, args.timeout))
        return 0
    load_start, start = os.getloadavg()[0], time.perf_counter()
    counts = {kind: Counter() for kind in dict.fromkeys(ROTATION)}
    findings: list[dict] = []
    k, end = args.seed, args.seed + args.inputs
    while k < end:  # a worker judges inputs; one stuck in C code (no timer reaches it) is
        k = _supervise(k, end, args, corpus, texts, counts, findings, start)  # killed
    return _report(args, counts, findings, time.perf_counter() - start, load_start)


def _set_up() -> None:
    torch.set_num_threads(1)
    signal.signal(signal.SIGALRM, _on_alarm)


def _work(conn, first: int, end: int, corpus, texts, timeout: float) -> None:
    _set_up()
    for k in range(first, end):
        kind = ROTATION[k % len(ROTATION)]
        conn.send((k, kind, *judge(kind, k, corpus, texts, timeout)))


def _supervise(first: int, end: int, args, corpus, texts, counts, findings, start) -> int:
    """Run a worker from input `first`; return the input after the last one judged (after a
    stuck one, counted as a hang, when the worker had to be killed)."""
    parent, child = multiprocessing.Pipe()
    worker = multiprocessing.Process(target=_work, daemon=True,
                                     args=(child, first, end, corpus, texts, args.timeout))
    worker.start()
    k = first
    try:
        while k < end:
            if not parent.poll(args.timeout + 60):  # the timer didn't get to interrupt it
                _record(k, ROTATION[k % len(ROTATION)], "hang", "killed: stuck in C code",
                        counts, findings, start)
                return k + 1
            k, *result = parent.recv()
            _record(k, *result, counts, findings, start)
            k += 1
        return k
    except EOFError:  # the worker died (a segfault, the OOM killer)
        _record(k, ROTATION[k % len(ROTATION)], "crash", "the worker process died", counts,
                findings, start)
        return k + 1
    finally:
        worker.kill()
        worker.join()


def _record(k: int, kind: str, outcome: str, detail: str, counts, findings, start) -> None:
    counts[kind][outcome] += 1
    if outcome in ("crash", "hang", "mismatch"):
        print(f"{outcome}: --replay {kind} {k}: {detail[:300]}", flush=True)
        if len(findings) < 50:
            findings.append({"kind": kind, "seed": k, "outcome": outcome, "detail": detail})
    done = sum(sum(c.values()) for c in counts.values())
    if done % 2_000 == 0:
        print(f"{done:,} inputs, {time.perf_counter() - start:,.0f} s", flush=True)


def _report(args, counts: dict, findings: list, elapsed: float, load_start: float) -> int:
    rows = [[kind, sum(c.values())] + [c[o] for o in OUTCOMES] for kind, c in counts.items()]
    total = [sum(r[i] for r in rows) for i in range(1, len(OUTCOMES) + 2)]
    rows.append(["all", *total])
    print(table(["kind", "inputs", *OUTCOMES], rows))
    print(f"\n{elapsed:,.0f} s; load average {load_start:.2f} at the start, "
          f"{os.getloadavg()[0]:.2f} at the end ({os.cpu_count()} cores)")
    for finding in findings[:10]:
        print(f"{finding['outcome']}: --replay {finding['kind']} {finding['seed']}: "
              f"{finding['detail'][:200]}")
    if args.report is not None:
        args.report.write_text(json.dumps({"counts": {k: dict(c) for k, c in counts.items()},
                                           "seconds": elapsed, "findings": findings}, indent=1))
    bad = sum(total[OUTCOMES.index(o) + 1] for o in ("crash", "hang", "mismatch"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
