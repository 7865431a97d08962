"""Data files (JSON, YAML, NPZ) and their conversion into arrays over a declaration's entries.

Nothing in a data file is executed: JSON through `json`, YAML through `yaml.safe_load`, NPZ
with `allow_pickle=False`. Errors name the file, the key and the index, and point at the key's
line in text files.
"""

from __future__ import annotations

import json
import math
import re
import zipfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .ast import Pos
from .errors import DataError
from .evaluate.elements import SetValue, element_of, key_of, keys_of, shown_int
from .evaluate.entities import Domain


@dataclass
class DataSource:
    """A loaded data mapping and where it came from (for error messages)."""

    values: Mapping[str, Any]
    filename: str = "<data>"
    text: str | None = None

    def error(self, message: str, key: str | None = None, hint: str | None = None) -> DataError:
        return DataError(
            message, self.locate(key), hint=hint, filename=self.filename, source=self.text
        )

    def locate(self, key: str | None) -> Pos | None:
        """The line and column of `key` in a JSON or YAML text file."""
        if key is None or self.text is None:
            return None
        pattern = rf'"{re.escape(key)}"\s*:' if self.filename.endswith(".json") else (
            rf"^\s*{re.escape(key)}\s*:"
        )
        match = re.search(pattern, self.text, flags=re.MULTILINE)
        if match is None:
            return None
        start = match.start() + (len(match.group(0)) - len(match.group(0).lstrip()))
        return _key_pos(self.text, start, key)


def _key_pos(text: str, start: int, key: str) -> Pos:
    """The span of a key written at offset `start` of `text` (quoted: key plus two)."""
    line = text.count("\n", 0, start) + 1
    column = start - (text.rfind("\n", 0, start) + 1) + 1
    return Pos(line, column, line, column + len(key) + 2)


NO_DATA = "<no data>"  # the name of the empty source a model is bound to without data


def load_data(source: str | Path | Mapping[str, Any] | None, name: str | None = None) -> DataSource:
    if source is None:
        return DataSource({}, name or NO_DATA)
    if isinstance(source, Mapping):
        return DataSource(source, name or "<data>")
    path = Path(source)
    filename = str(path)
    suffix = path.suffix.lower()
    if suffix not in (".npz", ".json", ".yaml", ".yml"):  # before reading: a binary .npy or
        raise DataError(                                  # .csv isn't "not UTF-8 text"
            f"unknown data format `{suffix or path.name}`", filename=filename,
            hint="use .json, .yaml or .npz",
        )
    try:
        if suffix == ".npz":
            return DataSource(_load_npz(path), filename)
        text = path.read_text().removeprefix("\ufeff")  # a byte-order mark (Windows editors)
    except FileNotFoundError:
        raise DataError("data file not found", filename=filename) from None
    except OSError as exc:
        raise DataError(f"can't read data file: {exc.strerror}", filename=filename) from None
    except UnicodeDecodeError:
        raise DataError("the data file is not UTF-8 text", filename=filename) from None
    values = _parse_json(text, filename) if suffix == ".json" else _parse_yaml(text, filename)
    if not isinstance(values, Mapping):
        raise DataError(
            "the data must be a mapping from names to values", Pos(1, 1, 1, 2),
            filename=filename, source=text,
        )
    return DataSource(values, filename, text)


class _DuplicateKey(Exception):
    pass


def _unique_pairs(pairs: list) -> dict:
    out = dict(pairs)
    if len(out) < len(pairs):  # json.loads would keep the last value without a word
        seen: set = set()
        for key, _ in pairs:
            if key in seen:
                raise _DuplicateKey(key)
            seen.add(key)
    return out


def _parse_json(text: str, filename: str):
    try:
        return json.loads(text, object_pairs_hook=_unique_pairs)
    except json.JSONDecodeError as exc:
        pos = Pos(exc.lineno, exc.colno, exc.lineno, exc.colno + 1)
        message = f"invalid JSON: {exc.msg}"
        if exc.pos >= len(text.rstrip()) or exc.msg.startswith("Unterminated string"):
            message = f"invalid JSON: the file ends early ({exc.msg})"
        raise DataError(message, pos, filename=filename, source=text) from None
    except _DuplicateKey as exc:
        key = str(exc.args[0])
        hits = list(re.finditer(rf'"{re.escape(key)}"\s*:', text))
        pos = None
        if len(hits) >= 2:  # (the second one written is the likely repeat)
            pos = _key_pos(text, hits[1].start(), key)
        raise DataError(f"key {json.dumps(key)} appears twice in one object", pos,
                        filename=filename, source=text,
                        hint="JSON would silently keep only the last value") from None


def _parse_yaml(text: str, filename: str):
    import yaml

    try:
        return yaml.load(text, Loader=_unique_yaml_loader())  # noqa: S506 (a SafeLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        pos = Pos(mark.line + 1, mark.column + 1, mark.line + 1, mark.column + 2) if mark else None
        problem = getattr(exc, "problem", None) or str(exc)
        raise DataError(f"invalid YAML: {problem}", pos, filename=filename, source=text) from None


def _unique_yaml_loader():
    """yaml's SafeLoader, refusing a key given twice in one mapping (it keeps the last)."""
    import yaml

    class Loader(yaml.SafeLoader):
        def construct_mapping(self, node, deep=False):
            seen = set()
            for key_node, _ in node.value:
                key = self.construct_object(key_node, deep=deep)
                if not isinstance(key, (str, int, float, bool)):
                    continue  # (an unhashable key: the base class reports it)
                if key in seen:
                    raise yaml.constructor.ConstructorError(
                        None, None, f"key {key!r} appears twice in one mapping",
                        key_node.start_mark)
                seen.add(key)
            return super().construct_mapping(node, deep=deep)

    return Loader


def _load_npz(path: Path) -> dict[str, np.ndarray]:
    with path.open("rb") as fh:  # (a missing file raises FileNotFoundError: load_data names it)
        if not zipfile.is_zipfile(fh):  # np.load would take it as .npy or pickle by its bytes
            raise DataError("not a valid npz file (not a zip archive of arrays; "
                            "np.savez writes one)", filename=str(path))
    key = None
    try:
        with np.load(path, allow_pickle=False) as archive:
            out = {}
            for key in archive.files:
                out[key] = archive[key]
            return out
    except ValueError as exc:
        what = f"array `{key}`: " if key is not None else ""
        raise DataError(f"can't read the npz file: {what}{exc}", filename=str(path)) from None
    except (OSError, EOFError, zipfile.BadZipFile) as exc:
        raise DataError(f"not a valid npz file ({exc})", filename=str(path)) from None


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
        raise source.error(f"set `{name}` lists {element!r} twice", name)
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
    values = np.zeros(n, dtype=np.int64 if elem else float)
    missing = np.ones(n, dtype=bool)
    if not domain.arity:
        values[0] = _scalar(source, name, raw, elem, "")
        missing[0] = False
        return values, missing
    if isinstance(raw, np.ndarray) and not elem and raw.dtype.kind not in "iuf":
        raise source.error(
            f"param `{name}` should hold numbers, but the array holds "
            f"{_KIND_NAMES.get(raw.dtype.kind, str(raw.dtype))}",
            name,
        )
    if domain.dense:
        sizes = [c.n for c in domain.components]
        widths = [len(ns) for ns in domain.names]
        flat_pos: list[int] = []
        flat_val: list = []
        if isinstance(raw, np.ndarray) and not elem:
            if raw.shape != tuple(sizes):
                raise source.error(
                    f"param `{name}` should have shape {sizes}, got {list(raw.shape)}", name
                )
            arr = raw.astype(float).ravel()
            if not np.isnan(arr).any():
                return arr, np.zeros(n, dtype=bool)
        elif isinstance(raw, list) and not elem and _plain_numbers(raw, len(sizes)):
            # fast path: a full nested list of numbers
            try:
                arr = np.asarray(raw, dtype=float)
            except (ValueError, TypeError, OverflowError):
                arr = None
            if arr is not None and arr.shape == tuple(sizes) and not np.isnan(arr).any():
                return arr.ravel(), np.zeros(n, dtype=bool)
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
            _walk_sparse(source, name, raw, table, domain.arity, flat_pos, flat_val, elem, [])
        pos = np.asarray(flat_pos, dtype=np.int64)
    vals = None
    if not elem and _plain_numbers(flat_val, 1):
        try:
            vals = np.asarray(flat_val, dtype=float)
        except OverflowError:  # an int past float's range: named below
            vals = None
        if vals is not None and np.isnan(vals).any():
            vals = None
    if vals is None:
        vals = _entry_values(source, name, flat_val, elem, lambda k: domain.label(int(pos[k])))
    if len(pos):
        values[pos] = np.asarray(vals, dtype=values.dtype)
        missing[pos] = False
    return values, missing


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
        if widths[level] != 1:
            raise source.error(
                f"param `{name}`: give the values over a set of tuples as a list aligned with "
                "the set's order",
                name,
            )
        try:
            keys = keys_of(list(_json_keys(raw.keys(), comp)))
        except ValueError as exc:
            raise source.error(f"param `{name}`{_fmt_path(path)}: {exc}", name) from None
        where = comp.position(keys)
        if np.any(where < 0):
            key = list(raw.keys())[int(np.nonzero(where < 0)[0][0])]
            raise source.error(
                f"param `{name}`{_fmt_path(path)}: unknown element {json.dumps(key)}"
                f" (not in {comp.name or 'its index set'})",
                name,
            )
        if level == len(comps) - 1:
            out_pos.extend((base + where * stride).tolist())
            out_val.extend(raw.values())
            return
        for (key, item), p in zip(raw.items(), where, strict=True):
            _walk(source, name, item, comps, widths, sizes, level + 1, base + int(p) * stride,
                  out_pos, out_val, elem, path + [key])
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


def _walk_sparse(source, name, raw, table: SetValue, arity, out_pos, out_val, elem, path):
    if len(path) == arity:
        key = np.asarray([[key_of(k) for k in path]], dtype=np.int64)
        p = int(table.position(key)[0])
        if p < 0:
            raise source.error(f"param `{name}`: {_fmt_path(path)} is not one of its entries", name)
        out_pos.append(p)
        out_val.append(raw)
        return
    if not isinstance(raw, Mapping):
        raise source.error(
            f"param `{name}`{_fmt_path(path)}: expected an object keyed by element", name
        )
    for key, item in raw.items():
        element = int(key) if isinstance(key, str) and re.fullmatch(r"-?\d+", key) else key
        _walk_sparse(source, name, item, table, arity, out_pos, out_val, elem, path + [element])


def _json_keys(keys, comp: SetValue):
    """JSON object keys are strings; map "3" to 3 when the set holds integers."""
    integer = comp.integer
    for key in keys:
        if isinstance(key, str) and re.fullmatch(r"-?\d+", key.strip()) and (
            integer or comp.position(np.array([key_of(key)]))[0] < 0  # not the text "3" itself
        ):
            yield int(key)
        else:
            yield key


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
            raise source.error(f"param `{name}`{_spot(where)}: {exc}", name) from None
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
                       hint=_yaml_hint(source, [raw]))


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
        if isinstance(v, str):
            try:
                float(v)
            except ValueError:
                continue
            return f"YAML reads `{v}` as text: write the exponent with a dot and a sign, 2.0e+3"
    return None


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


def describe_keys(keys: np.ndarray) -> str:
    return "[" + ", ".join(str(element_of(k)) for k in keys) + "]"
