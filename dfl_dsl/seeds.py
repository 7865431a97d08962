"""One rule for random seeds, checked where a seed comes in (a command's `--seed`, a Python
call's `seed=`, a loss's own `seed`): a whole number from 0 to 2**32 - 1. That is the range
numpy's RandomState takes (the generators, a loss's noise), and within torch's and
default_rng's, so every consumer downstream accepts it; outside it, a seed used to reach them
and fail there (`--seed 2**70`: torch's "Overflow when unpacking long long", exit 3)."""

from __future__ import annotations

from .errors import DflError

SEED_MAX = 2**32 - 1


def is_seed(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= SEED_MAX


def check_seed(value: object, name: str = "--seed") -> None:
    """None (no seed) or a seed; anything else is a DflError naming `name`."""
    if value is not None and not is_seed(value):
        raise DflError(f"{name} must be a whole number from 0 to 2**32 - 1 ({SEED_MAX}), "
                       f"got {value!r}")
