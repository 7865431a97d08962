"""The data files are AMPL data as another implementation reads them: Pyomo's DataPortal (its
own parser of AMPL data commands) reads every .dat and finds the numbers that the hand-written
JSON copies hold, which the Pyomo references solve. So the references and `dfl solve` start
from the same numbers, and the .dat files are not written for dfl_dsl's reader alone."""

from __future__ import annotations

import math
import re

import pytest
from _ampl import MODELS, dat, mod, names, numbers

pe = pytest.importorskip("pyomo.environ")
dataportal = pytest.importorskip("pyomo.dataportal")


def _depth(value) -> int:
    return 1 + _depth(next(iter(value.values()))) if isinstance(value, dict) and value else 0


def _abstract(d: dict):
    """A Pyomo AbstractModel declaring each name of the JSON copy with its dimension."""
    m = pe.AbstractModel()
    for key, value in d.items():
        if isinstance(value, list):
            dimen = len(value[0]) if value and isinstance(value[0], list) else 1
            setattr(m, key, pe.Set(dimen=dimen))
        elif isinstance(value, dict) and all(isinstance(v, list) for v in value.values()):
            setattr(m, key, pe.Set(pe.Any))
        elif isinstance(value, dict):
            setattr(m, key, pe.Param(pe.Set(dimen=_depth(value)), within=pe.Any))
        else:
            setattr(m, key, pe.Param(within=pe.Any))
    return m


def _flat(value, prefix=()) -> dict:
    """A nested JSON object as {(key, ...): value} with string keys."""
    if isinstance(value, dict) and not all(isinstance(v, list) for v in value.values()):
        out = {}
        for key, inner in value.items():
            out.update(_flat(inner, (*prefix, str(key))))
        return out
    return {prefix: value}


def _keys(key) -> tuple:
    return tuple(str(k) for k in (key if isinstance(key, tuple) else (key,)))


def _same(a, b) -> bool:
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return math.isclose(a, b, rel_tol=0, abs_tol=0)
    if isinstance(a, list) and isinstance(b, list):
        return [_keys(x) if isinstance(x, tuple) else str(x) for x in a] == \
            [_keys(tuple(x)) if isinstance(x, list) else str(x) for x in b]
    return str(a) == str(b)


def _data_text(name: str) -> str:
    path = dat(name)
    return path.read_text() if path else mod(name).read_text().partition("\ndata;\n")[2]


# Data forms AMPL reads and Pyomo's parser does not.
PYOMO_LACKS = {"freight": "table slices (`[*,*,1]: x y z := ...`)"}


@pytest.mark.parametrize("name", names())
def test_pyomo_reads_the_numbers_of_the_json_copy(name, tmp_path):
    if name in PYOMO_LACKS:
        pytest.skip(f"Pyomo's data parser has no {PYOMO_LACKS[name]}")
    d = numbers(name)
    text = _data_text(name)
    source = tmp_path / f"{name}.dat"
    source.write_text(text)
    portal = dataportal.DataPortal(model=_abstract(d))
    portal.load(filename=str(source))
    read = portal.data()
    assert set(read) == set(d), name
    for key, value in d.items():
        got = read[key]
        if not isinstance(value, dict) or all(isinstance(v, list) for v in value.values()):
            got = got[None] if None in got else {str(k): v for k, v in got.items()}
            assert _same(got, value) or all(_same(got[k], value[k]) for k in value), key
            continue
        default = re.search(rf"param {key} default (\S+?)\s*:", text)
        want, have = _flat(value), {_keys(k): v for k, v in got.items()}
        for entry in set(want) | set(have):
            if entry not in have:     # the .dat statement's `default` fills it
                assert default and _same(want[entry], float(default.group(1))), (key, entry)
            elif entry not in want:   # the JSON leaves it to the model's default Infinity
                assert have[entry] == "Infinity", (key, entry)
            else:
                assert _same(have[entry], want[entry]), (key, entry, have[entry], want[entry])


def test_every_model_has_its_json_copy():
    for name in names():
        assert (MODELS / name / f"{name}.json").is_file(), name
