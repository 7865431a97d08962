"""Element keys (ints as themselves, strings interned) and vectorized lookups in sets."""

from __future__ import annotations

import numpy as np
import pytest

from dfl_dsl.evaluate.elements import (
    NO_KEY,
    STRING_BASE,
    SetValue,
    combine_columns,
    element_of,
    format_key,
    intern,
    is_string_key,
    key_of,
    keys_of,
    number_keys,
    whole_keys,
)


def test_int_and_string_keys_round_trip():
    assert key_of(7) == 7 and key_of(-3) == -3 and key_of(np.int32(4)) == 4
    assert key_of(2.0) == 2  # JSON may write an integer element as 2.0
    k = key_of("GARY")
    assert k >= STRING_BASE and key_of("GARY") == k == intern("GARY")
    assert element_of(k) == "GARY" and element_of(5) == 5
    assert is_string_key(np.array([k, 5])).tolist() == [True, False]


@pytest.mark.parametrize("bad", [True, np.bool_(False), 1.5, None, [1], float("nan")])
def test_what_cannot_be_an_element(bad):
    with pytest.raises(ValueError):
        key_of(bad)


def test_too_large_integer_is_refused():
    with pytest.raises(ValueError, match="too large"):
        key_of(int(STRING_BASE))
    with pytest.raises(ValueError, match="too large"):
        keys_of(np.array([1, int(STRING_BASE) + 5]))


def test_keys_of_fast_path_and_mixed():
    assert keys_of([3, 1, 2]).tolist() == [3, 1, 2]
    assert keys_of(np.array([3, 1], dtype=np.int32)).dtype == np.int64
    mixed = keys_of(["a", 2])
    assert element_of(mixed[0]) == "a" and mixed[1] == 2


def test_keys_of_refuses_booleans_among_integers():
    # numpy would read [1, True] as the integers [1, 1]
    with pytest.raises(ValueError):
        keys_of([1, True])


def test_position_integer_range_uses_arithmetic():
    s = SetValue(np.arange(5, 10))
    assert s.range_start == 5
    assert s.position(np.array([5, 9, 10, 4, 7])).tolist() == [0, 4, -1, -1, 2]


def test_position_unsorted_strings():
    s = SetValue(keys_of(["PITT", "GARY", "CLEV"]))
    assert s.range_start is None and not s.integer
    q = keys_of(["GARY", "XXX", "PITT", "CLEV"])
    assert s.position(q).tolist() == [1, -1, 0, 2]


def test_position_of_pairs():
    s = SetValue(np.array([[1, 2], [2, 1], [1, 3]]))
    assert s.dim == 2 and s.n == 3
    q = np.array([[1, 3], [3, 1], [2, 1], [1, 2]])
    assert s.position(q).tolist() == [2, -1, 1, 0]
    assert s.elements() == [(1, 2), (2, 1), (1, 3)]


def test_position_in_empty_set():
    s = SetValue(np.zeros((0, 1), dtype=np.int64))
    assert s.position(np.array([1, 2])).tolist() == [-1, -1]


def test_random_lookups_match_a_dict():
    rng = np.random.default_rng(0)
    keys = rng.choice(10_000, size=300, replace=False)
    s = SetValue(keys)
    query = rng.integers(0, 10_000, size=1000)
    where = {int(k): i for i, k in enumerate(keys)}
    assert s.position(query).tolist() == [where.get(int(q), -1) for q in query]


def test_duplicates():
    s = SetValue(np.array([[1, 2], [2, 1], [1, 2], [3, 3], [2, 1]]))
    assert s.duplicates().tolist() == [2, 4]
    assert SetValue(np.array([4, 5, 6])).duplicates().tolist() == []


def test_combine_columns_codes_agree_across_tables():
    a = np.array([[1, 2], [5, 6], [1, 6]])
    b = np.array([[5, 6], [1, 2], [6, 1]])
    ca, cb = combine_columns(a, b)
    assert ca[0] == cb[1] and ca[1] == cb[0]
    assert cb[2] not in set(ca.tolist())


def test_format_key():
    assert format_key(np.array([key_of("GARY"), key_of("FRA")])) == "[GARY, FRA]"
    assert format_key(3) == "[3]"


def test_numbers_that_are_no_element_get_the_key_no_set_holds():
    # a cast truncated 2.5 to 2 (`2.5 in S` was true) and wrapped 1e19 around int64
    keys = number_keys(np.array([2.0, 2.5, 1e19, -1e308, np.nan, np.inf, -7.0]))
    assert keys.tolist() == [2, NO_KEY, NO_KEY, NO_KEY, NO_KEY, NO_KEY, -7]
    big = np.array([3, 2**63 + 5], dtype=np.uint64)
    assert number_keys(big).tolist() == [3, NO_KEY]
    assert whole_keys(np.array([1.0, 4.0])).tolist() == [1, 4]
    assert whole_keys(np.array([1.0, 2.0**62])) is None


def test_a_float_element_beyond_the_range_is_refused():
    with pytest.raises(ValueError, match="too large"):
        key_of(-1e308)
    assert key_of(-3.0) == -3


def test_interning_in_bulk_agrees_with_one_by_one():
    from dfl_dsl.evaluate.elements import intern_all

    fresh = intern_all(["bulk-p", "bulk-q", "bulk-p", "bulk-r"])  # new, with a repeat
    assert fresh[0] == fresh[2] == intern("bulk-p") and len(set(fresh.tolist())) == 3
    assert [element_of(k) for k in fresh] == ["bulk-p", "bulk-q", "bulk-p", "bulk-r"]
    mixed = intern_all(["bulk-q", "bulk-s", "bulk-s"])  # one known, one new twice
    assert mixed[0] == fresh[1] and mixed[1] == mixed[2] == intern("bulk-s")
    known_and_new = intern_all(["bulk-t", "bulk-q", "bulk-u"])  # new ones filled in
    assert known_and_new[1] == fresh[1] and known_and_new[2] == known_and_new[0] + 1
    assert [element_of(k) for k in known_and_new] == ["bulk-t", "bulk-q", "bulk-u"]
    distinct = intern_all([f"bulk-{k}" for k in range(5)])  # the consecutive codes
    assert np.diff(distinct).tolist() == [1, 1, 1, 1] and element_of(distinct[4]) == "bulk-4"
