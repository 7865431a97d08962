"""The cap on how many entries one set, index, shape or product may have, checked before
the arrays are made.

A size typo in the data (`m = 1e8` for `1e3`, `"n": 9223372036854775809`) otherwise either
allocates gigabytes for many seconds before running out of memory, or wraps around int64 into
an empty model that then solves `optimal`. Sizes are counted as Python integers (no wrapping),
and a count above the cap is a located error naming it. The cap defaults to `DEFAULT_LIMIT`
entries; the environment variable `DFL_MAX_ENTRIES` sets another (`0`: no cap).
"""

from __future__ import annotations

import os
from decimal import Decimal

from .values import EvalError

DEFAULT_LIMIT = 50_000_000
# measured (m = 2e6 and 8e6): binding `var x[m]` grows the peak RSS by 55 bytes per entry,
# a HiGHS solve of it by 200 more (docs/reliability.md); the message quotes the first
BIND_BYTES_PER_ENTRY = 55
ENV = "DFL_MAX_ENTRIES"


def limit() -> int | None:
    """The cap in force (None: no cap). A malformed setting is a user error, not a crash."""
    text = os.environ.get(ENV)
    if text is None or not text.strip():
        return DEFAULT_LIMIT
    try:
        value = int(float(text))
    except (ValueError, OverflowError):
        raise EvalError(f"{ENV}={text!r} is not a number of entries",
                        f"unset it, or give a whole number such as {DEFAULT_LIMIT}") from None
    return None if value <= 0 else value


def check_count(count: int, what: str, bytes_per_entry: int = BIND_BYTES_PER_ENTRY,
                fix: str = "check the sizes the data gives") -> int:
    """`count` (a Python int: never wrapped) if it is within the cap, else an `EvalError`
    saying what would have been made and about how much memory it would take."""
    cap = limit()
    if cap is not None and count > cap:
        shown = f"{count:,}" if count < 10**15 else f"{Decimal(count):.3g}"  # (no float:
        # a size near 1e308 times another, or times the bytes per entry, overflows one)
        raise EvalError(
            f"{what} would have {shown} entries (about {_memory(count * bytes_per_entry)} of "
            f"memory); the limit is {cap:,}",
            f"{fix}; to allow more, set {ENV} (0: no limit)",
        )
    return count


def _memory(size: int) -> str:
    if size < 10**9:
        return f"{size / 1e6:.0f} MB"
    return f"{size / 1e9:,.1f} GB" if size < 10**12 else f"{Decimal(size) / 10**12:.3g} TB"
