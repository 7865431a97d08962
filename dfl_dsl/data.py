"""Data files (JSON, YAML, NPZ, AMPL .dat) and their conversion into arrays over entries.

Nothing in a data file is executed: JSON through `json`, YAML through `yaml.safe_load`, NPZ
with `allow_pickle=False`. Errors name the file, the key and the index, and point at the key's
line in text files.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from .ampl_data import read_dat
from .ast import Pos
from .data_formats import load_npz, parse_json, parse_yaml
from .data_source import NO_DATA, DataSource, read_text, reading
from .errors import DataError
from .evaluate.elements import SetValue, key_of, keys_of, shown_int
from .evaluate.entities import Domain


def load_data(source: str | Path | Mapping[str, Any] | DataSource | None,
              name: str | None = None, schema: Any = None) -> DataSource:
    """The data at `source` (a file by its extension, a mapping, or a source already read);
    `schema` (an `ampl_data.Schema`) tells a .dat file's reader the model's widths."""
    if isinstance(source, DataSource):
        return source
    if source is None:
        return DataSource({}, name or NO_DATA)
    if isinstance(source, Mapping):
        return DataSource(source, name or "<data>")
    path = Path(source)
    filename = str(path)
    suffix = path.suffix.lower()
    if suffix not in (".npz", ".json", ".yaml", ".yml", ".dat"):  # before reading: a binary
        if path.is_dir() or not path.exists():  # `-d data/` or `-d mydata`: the OS's words
            reading(path, Path.read_bytes)       # ("not found", "Is a directory"), not its name
        raise DataError(                                  # .npy or .csv isn't "not UTF-8 text"
            f"unknown data format `{suffix or path.name}`", filename=filename,
            hint="use .json, .yaml, .npz or .dat",
        )
    if suffix == ".dat":
        return read_dat(path, schema)
    if suffix == ".npz":
        return DataSource(reading(path, load_npz), filename)
    text = read_text(path)
    values = parse_json(text, filename) if suffix == ".json" else parse_yaml(text, filename)
    if not isinstance(values, Mapping):
        raise DataError(
            "the data must be a mapping from names to values", Pos(1, 1, 1, 2),
            filename=filename, source=text,
        )
    return DataSource(values, filename, text)


# ---------------------------------------------------------------------- sets
def to_set(source: DataSource, name: str, raw: Any, dim: int) -> SetValue:
    """A set from data: a list of elements, or of tuples for a set of tuples."""
    if isinstance(raw, np.ndarray):
        raw = raw.tolist()
    if not isinstance(raw, list):
        raise source.error(f"set `{name}` must be a list of elements", name)
    if dim == 1:
        nested = {list, tuple, dict} & set(map(type, raw))  # (the distinct types: fast)
        for k, item in enumerate(raw if nested else ()):
            if isinstance(item, (list, tuple, dict)):
                raise source.error(
                    f"set `{name}`: element {k} is a {type(item).__name__}, but `{name}` holds "
                    "single elements",
                    name,
                    hint=f"declare `set {name} within S * T;` for a set of pairs",
                )
        try:
            keys = keys_of(raw).reshape(-1, 1) if raw else np.zeros((0, 1), dtype=np.int64)
        except ValueError as exc:
            raise source.error(f"set `{name}`: {exc}", name, hint=_yaml_hint(source, raw)) from None
    else:
        rows = []
        for k, item in enumerate(raw):
            if not isinstance(item, (list, tuple)) or len(item) != dim:
                raise source.error(
                    f"set `{name}`: element {k} should be a list of {dim} elements, got "
                    f"{json.dumps(item) if not isinstance(item, np.generic) else item}",
                    name,
                )
            try:
                rows.append([key_of(v) for v in item])
            except ValueError as exc:
                raise source.error(f"set `{name}`: element {k}: {exc}", name) from None
        keys = np.asarray(rows, dtype=np.int64).reshape(-1, dim)
    result = SetValue(keys, name)
    dup = result.duplicates()
    if len(dup):
        element = result.elements()[int(dup[0])]
        raise source.error(f"set `{name}` lists {element!r} twice", name, at=element)
    return result


# ---------------------------------------------------------------------- params
def to_entries(
    source: DataSource, name: str, raw: Any, domain: Domain, elem: bool
) -> tuple[np.ndarray, np.ndarray]:
    """One value per entry of `domain` (and a mask of entries the data leaves out).

    Accepts nested lists in index order and nested objects keyed by element, mixed freely,
    and for a set of tuples a list aligned with the set's order.
    """
    n = domain.n
    if isinstance(raw, np.ndarray) and domain.arity and not elem and raw.dtype.kind not in "iuf":
        raise source.error(
            f"param `{name}` should hold numbers, but the array holds "
            f"{_KIND_NAMES.get(raw.dtype.kind, str(raw.dtype))}",
            name,
        )
    if domain.dense and domain.arity and not elem:  # (before the per-entry arrays are made)
        whole = _whole_array(source, name, raw, [c.n for c in domain.components])
        if whole is not None:
            return whole, np.zeros(n, dtype=bool)
    values = np.zeros(n, dtype=np.int64 if elem else float)
    missing = np.ones(n, dtype=bool)
    if not domain.arity:
        values[0] = _scalar(source, name, raw, elem, "")
        missing[0] = False
        return values, missing
    if domain.dense:
        sizes = [c.n for c in domain.components]
        widths = [len(ns) for ns in domain.names]
        flat_pos: list[int] = []
        flat_val: list = []
        _walk(source, name, raw, domain.components, widths, sizes, 0, 0, flat_pos, flat_val,
              elem, [])
        pos = np.asarray(flat_pos, dtype=np.int64)
    else:
        flat_pos, flat_val = [], []
        table = SetValue(domain.keys())
        if isinstance(raw, (list, np.ndarray)) and not _is_keyed(raw):
            seq = list(raw)
            if len(seq) != n:
                raise source.error(
                    f"param `{name}` has {n} entries but the data lists {len(seq)} values", name
                )
            flat_pos, flat_val = list(range(n)), seq
        else:
            _walk_sparse(source, name, raw, table, domain.arity, flat_pos, flat_val)
        pos = np.asarray(flat_pos, dtype=np.int64)
    vals = None if elem else _plain_array(flat_val)
    if vals is None:
        vals = _entry_values(source, name, flat_val, elem, lambda k: domain.label(int(pos[k])))
    if len(pos):
        values[pos] = np.asarray(vals, dtype=values.dtype)
        missing[pos] = False
    return _data_default(source, name, values, missing, elem)


def _data_default(source: DataSource, name: str, values: np.ndarray, missing: np.ndarray,
                  elem: bool) -> tuple[np.ndarray, np.ndarray]:
    """The entries the data leaves out, filled by the data's own `default` for `name` (an
    AMPL `param p default 0 := ...`), which comes before the model's."""
    fill = source.defaults.get(name)
    if fill is None or not missing.any():
        return values, missing
    values[missing] = _scalar(source, name, fill, elem, " (its default in the data)")
    return values, np.zeros_like(missing)



def _whole_array(source: DataSource, name: str, raw: Any, sizes: list[int]) -> np.ndarray | None:
    """The fast path: numbers given as an array or full nested lists in the param's shape,
    flat (None: read entry by entry, which names a wrong one)."""
    if isinstance(raw, np.ndarray):
        if raw.shape != tuple(sizes):
            raise source.error(
                f"param `{name}` should have shape {sizes}, got {list(raw.shape)}", name
            )
        arr = raw.astype(float).ravel()
    elif isinstance(raw, list) and _plain_numbers(raw, len(sizes)):
        try:
            arr = np.asarray(raw, dtype=float)
        except (ValueError, TypeError, OverflowError):
            return None
        if arr.shape != tuple(sizes):
            return None
        arr = arr.ravel()
    else:
        return None
    # (min is NaN when any entry is, and can't overflow: no mask to write for the usual case)
    return None if arr.size and np.isnan(arr.min()) else arr


def _plain_array(values: list) -> np.ndarray | None:
    """Entries given one by one, as floats when all are plain numbers (None: read each)."""
    if not _plain_numbers(values, 1):
        return None
    try:
        vals = np.asarray(values, dtype=float)
    except OverflowError:  # an int past float's range: named entry by entry
        return None
    return None if np.isnan(vals).any() else vals

_NUMBER_TYPES = (int, float, np.integer, np.floating)
_FLOAT_INTS = 1 << 1024  # ints at least this large overflow float()
_INF_TEXTS = {"inf": math.inf, "+inf": math.inf, "-inf": -math.inf, "Infinity": math.inf,
              "-Infinity": -math.inf}  # the common spellings (`_scalar` reads the others)
_KIND_NAMES = {"b": "booleans", "U": "text", "S": "bytes", "O": "objects", "c": "complex numbers",
               "M": "dates", "m": "time spans", "V": "records"}


def _plain_numbers(raw: list, depth: int) -> bool:
    """Whether `raw` is nested lists (`depth` deep) of plain numbers: no bool, null or text,
    which `np.asarray(..., dtype=float)` would quietly read as 1, NaN or a parsed number."""
    if depth <= 1:
        return all(issubclass(t, _NUMBER_TYPES) and not issubclass(t, (bool, np.bool_))
                   for t in set(map(type, raw)))  # the distinct types only: fast on big lists
    return all(isinstance(v, list) and _plain_numbers(v, depth - 1) for v in raw)


def _is_keyed(raw) -> bool:
    return isinstance(raw, Mapping)


def _walk(source, name, raw, comps, widths, sizes, level, base, out_pos, out_val, elem, path):
    """Nested lists/objects -> flat positions in the dense product layout."""
    if level == len(comps):
        out_pos.append(base)
        out_val.append(raw)
        return
    comp, size = comps[level], sizes[level]
    stride = int(np.prod(sizes[level + 1:], dtype=np.int64))
    if isinstance(raw, np.ndarray):
        raw = raw.tolist()
    if isinstance(raw, Mapping):
        labels, items, where = _keyed(source, name, raw, comp, widths[level], path)
        if level == len(comps) - 1:
            out_pos.extend((base + where * stride).tolist())
            out_val.extend(items)
            return
        for label, item, p in zip(labels, items, where, strict=True):
            _walk(source, name, item, comps, widths, sizes, level + 1, base + int(p) * stride,
                  out_pos, out_val, elem, path + (label if isinstance(label, list) else [label]))
        return
    if isinstance(raw, list):
        if len(raw) != size:
            raise source.error(
                f"param `{name}`{_fmt_path(path)}: expected {size} values"
                f"{' over ' + comp.name if comp.name else ''}, got {len(raw)}",
                name,
            )
        if level == len(comps) - 1:  # the values: checked one by one later (_entry_values)
            out_pos.extend(range(base, base + size * stride, stride))
            out_val.extend(raw)
            return
        labels = comp.elements() if comp.dim == 1 else range(size)  # (once: not per item)
        for k, item in enumerate(raw):
            _walk(source, name, item, comps, widths, sizes, level + 1, base + k * stride,
                  out_pos, out_val, elem, path + [labels[k]])
        return
    shown = json.dumps(raw) if _jsonable(raw) else repr(raw)
    raise source.error(
        f"param `{name}`{_fmt_path(path)}: expected a list or an object over "
        f"{comp.name or 'its index set'}, got {shown}",
        name,
    )


def _keyed(source: DataSource, name: str, raw: Mapping, comp: SetValue, width: int,
           path: list) -> tuple[list, list, np.ndarray]:
    """An object keyed by the elements of `comp` (`width` levels deep over a set of tuples):
    each entry's key (a list of keys over tuples), its item, and its position in `comp`; an
    unknown key is an error."""
    if width == 1:
        labels: list = list(raw)
        items = list(raw.values())
        coerced = [_json_keys(labels, comp)]
    else:
        labels, items = [], []
        _tuple_levels(source, name, raw, width, path, [], labels, items)
    try:
        if width > 1:
            coerced = [_json_keys([lab[j] for lab in labels], _column(comp, j))
                       for j in range(width)]
        columns = [col for col, _ in coerced]
        keys = np.stack([keys_of(col) if col else np.zeros(0, dtype=np.int64)
                         for col in columns], axis=1)
    except ValueError as exc:
        raise source.error(f"param `{name}`{_fmt_path(path)}: {exc}", name) from None
    where = comp.position(keys[:, 0] if width == 1 else keys)
    if np.any(where < 0):
        label = labels[int(np.nonzero(where < 0)[0][0])]
        shown = json.dumps(label) if width == 1 else "(" + ", ".join(map(str, label)) + ")"
        raise source.error(
            f"param `{name}`{_fmt_path(path)}: unknown element {shown}"
            f" (not in {comp.name or 'its index set'})", name,
            at=label if width == 1 else label[0])
    if any(read for _, read in coerced) and len(np.unique(where)) < len(where):
        _same_element(source, name, path, labels, where, comp.name)
    return labels, items, where


def _same_element(source: DataSource, name: str, path: list, labels: list,
                  where: np.ndarray, set_name: str | None) -> None:
    """Two keys of one object read as the same element (`"5"` and `5` in a .dat table, `"5"`
    and `"05"` in JSON, both meaning the set's 5): one entry would overwrite the other."""
    order = np.argsort(where, kind="stable")
    twin = np.flatnonzero(np.diff(where[order]) == 0)[0]
    first, second = labels[int(order[twin])], labels[int(order[twin + 1])]
    raise source.error(
        f"param `{name}`{_fmt_path(path)}: keys {json.dumps(first)} and {json.dumps(second)} "
        f"name the same element{' of ' + set_name if set_name else ''}", name, at=second,
        hint="give each entry once")


def _tuple_levels(source, name, raw, width, path, prefix, labels, items) -> None:
    """The entries of objects nested `width` levels deep, one level per tuple component."""
    if len(prefix) == width:
        labels.append(prefix)
        items.append(raw)
        return
    if not isinstance(raw, Mapping):
        raise source.error(
            f"param `{name}`{_fmt_path(path + prefix)}: expected an object keyed by element "
            f"(a tuple's {width} components take one level each)", name)
    for key, item in raw.items():
        _tuple_levels(source, name, item, width, path, prefix + [key], labels, items)


def _column(comp: SetValue, j: int) -> SetValue:
    """Component `j` of a set of tuples as a set of its own (for reading JSON keys)."""
    return SetValue(np.unique(comp.keys[:, j]).reshape(-1, 1))


def _walk_sparse(source, name, raw, table: SetValue, arity: int, out_pos, out_val) -> None:
    """An object over a sparse index (a set of tuples, a filtered index), one level of keys per
    component: read by `_keyed`, as an object over a dense index is, so that a digit key means
    the same element either way and two keys naming one element are refused either way."""
    if not isinstance(raw, Mapping):
        shown = json.dumps(raw) if _jsonable(raw) else repr(raw)
        raise source.error(
            f"param `{name}`: expected a list aligned with its entries or an object keyed by "
            f"element, got {shown}", name)
    _, items, where = _keyed(source, name, raw, table, arity, [])
    out_pos.extend(where.tolist())
    out_val.extend(items)


_DIGITS_LINE = re.compile(r"^\s*-?\d+\s*$", re.MULTILINE)


def _json_keys(keys, comp: SetValue) -> tuple[list, bool]:
    """JSON object keys are strings; map "3" to 3 when the set holds integers (and say whether
    any text was read so: two keys may then name one element). One regex search over all the
    keys first: most hold no number, and a .dat row has thousands."""
    keys = list(keys)
    texts = [key for key in keys if type(key) is str]
    if not texts or not _DIGITS_LINE.search("\n".join(texts)):
        return keys, False
    integer = comp.integer
    return [
        int(key) if isinstance(key, str) and re.fullmatch(r"-?\d+", key.strip()) and (
            integer or comp.position(np.array([key_of(key)]))[0] < 0  # not the text "3" itself
        ) else key
        for key in keys
    ], True


def _entry_values(source: DataSource, name: str, raw: list, elem: bool,
                  label: Callable[[int], str]) -> np.ndarray | list:
    """The values of entries given one by one (not all plain numbers): element keys, or
    numbers with `"inf"` texts read; an entry that is neither is an error naming it. The
    entry's label is made only for an error: made for every entry, it cost O(n) each (1M
    entries with strings or nulls took longer than 600 s)."""
    if elem:
        try:
            return keys_of(raw)
        except ValueError:  # name the first entry that is no element (below)
            pass
    out = []
    for k, value in enumerate(raw):
        kind = type(value)
        if not elem and (kind is float and value == value  # (no NaN)
                         or kind is int and abs(value) < _FLOAT_INTS):
            out.append(float(value))
        elif not elem and kind is str and value in _INF_TEXTS:
            out.append(_INF_TEXTS[value])
        else:
            out.append(_scalar(source, name, value, elem, lambda k=k: label(k)))
    return out


def _scalar(source: DataSource, name: str, raw: Any, elem: bool, where: str | Callable[[], str]):
    """`raw` as a number (or an element key); an error names the param and the entry `where`
    (a callable: made only for an error)."""
    if isinstance(raw, (np.ndarray, np.generic)) and raw.shape == ():
        raw = raw.item()  # a 0-d array from an npz file
    if elem:
        try:
            return key_of(raw)
        except ValueError as exc:
            raise source.error(f"param `{name}`{_spot(where)}: {exc}", name, at=raw) from None
    if isinstance(raw, bool):
        raise source.error(
            f"param `{name}`{_spot(where)}: expected a number, got {str(raw).lower()}", name,
            hint=_yaml_hint(source, [raw]),
        )
    if isinstance(raw, int) and abs(raw) >= _FLOAT_INTS:
        raise source.error(f"param `{name}`{_spot(where)}: {shown_int(raw)} is too large for a "
                           "float", name)
    if isinstance(raw, (int, float)):
        if math.isnan(float(raw)):
            raise source.error(f"param `{name}`{_spot(where)}: expected a number, got NaN", name)
        return float(raw)
    if isinstance(raw, str) and raw.strip().lower() in ("inf", "+inf", "-inf", "infinity"):
        return float(raw.strip().lower().replace("infinity", "inf"))
    shown = json.dumps(raw) if _jsonable(raw) else repr(raw)
    if len(shown) > 60:
        shown = shown[:57] + "..."
    raise source.error(f"param `{name}`{_spot(where)}: expected a number, got {shown}", name,
                       hint=_yaml_hint(source, [raw]), at=raw)


def _spot(where: str | Callable[[], str]) -> str:
    return where() if callable(where) else where


def _yaml_hint(source: DataSource, raw: list) -> str | None:
    """YAML 1.1 (PyYAML) reads `NO`, `yes`, `on`, `off` as booleans and `2e3` (no dot) as
    text: say so, since the file shows neither."""
    if not source.filename.endswith((".yaml", ".yml")):
        return None
    if any(isinstance(v, bool) for v in raw):
        return 'YAML reads no, Yes, ON, off and the like as false/true: quote them, "NO"'
    for v in raw:
        number = _YAML_1_1_TEXT.fullmatch(v) if isinstance(v, str) else None
        if number is not None:  # the user's own number, written as YAML 1.1 reads a float
            sign, whole, part, esign, exponent = number.groups()
            written = f"{sign}{whole or '0'}.{part or '0'}e{esign or '+'}{exponent}"
            return f"YAML reads `{v}` as text: write it {written} (a dot, a signed exponent)"
    return None


# a number PyYAML leaves as text: an exponent without a dot before it or a sign in it
_YAML_1_1_TEXT = re.compile(r"\s*([-+]?)(\d*)(?:\.(\d*))?[eE]([-+]?)(\d+)\s*")


def _jsonable(raw) -> bool:
    try:
        json.dumps(raw)
    except (TypeError, ValueError):
        return False
    return True


def _fmt_path(path: list) -> str:
    if not path:
        return ""
    return "[" + ", ".join(json.dumps(p) if isinstance(p, str) else str(p) for p in path) + "]"
