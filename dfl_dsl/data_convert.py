"""`dfl data FILE --to json`: a data file (an AMPL .dat, or a model file's `data;` part) written
as JSON or YAML — the mapping the JSON reader would give, so `dfl solve M --data FILE.json`
binds the same arrays as the .dat did.

A `default` in a .dat file has no place in JSON: with the model at hand (`--model`), the
defaulted params are written entry by entry over their index (bound from the same data);
without one, that is an error.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from .data import DataSource, load_data
from .errors import DflError
from .evaluate.elements import element_of

FORMATS = ("json", "yaml")


def convert(data: Path, to: str, model_path: Path | None = None) -> str:
    """The text of `data` in the format `to`."""
    if to not in FORMATS:
        raise DflError(f"--to {to}: unknown format", hint="use --to json or --to yaml")
    from .ampl_data import model_schema
    from .model import load

    model = load(model_path) if model_path is not None else None
    if data.suffix.lower() in (".mod", ".opt"):
        model = load(data)
        if model.data is None:
            raise DflError("the model file has no data part (a `data;` line and statements "
                           "after it)", filename=str(data))
        source = model.data
    else:
        source = load_data(data, schema=model_schema(model) if model is not None else None)
    values = {name: _merged(raw, source, name) for name, raw in source.values.items()}
    if source.defaults:
        values.update(_plain(_expanded(source, model)))
    if to == "yaml":
        import yaml

        return yaml.safe_dump(values, sort_keys=False, allow_unicode=True)
    lines = (f" {json.dumps(k, ensure_ascii=False)}: {json.dumps(v, ensure_ascii=False)}"
             for k, v in values.items())  # one line per name: readable, and errors locate it
    return "{\n" + ",\n".join(lines) + "\n}\n"


def _expanded(source: DataSource, model) -> dict[str, Any]:
    """The params with a `default` in the data, every entry written (bound with `model`)."""
    name = next(iter(source.defaults))
    if model is None:
        raise source.error(f"param `{name}` has a `default` in the data, which JSON can't "
                           "hold", name, hint="give the model (--model FILE) to write every "
                           "entry of the defaulted params")
    inst = model.bind(source)
    out = {}
    for name in source.defaults:
        entity = inst.ctx.entities.get(name)
        if entity is None:  # (not the model's: the data's own business)
            continue
        keys, data = entity.domain.keys(), entity.data
        values = [element_of(v) for v in data] if entity.elem else data.tolist()
        if not entity.domain.arity:
            out[name] = values[0]
            continue
        nested: dict = {}
        for row, val in zip(keys.tolist(), values, strict=True):
            node = nested
            for key in row[:-1]:
                node = node.setdefault(element_of(key), {})
            node[element_of(row[-1])] = val
        out[name] = nested
    return out


def _merged(raw: Any, source: DataSource, name: str, path: tuple = ()) -> Any:
    """`raw` with the keys of each object that JSON spells alike merged: a .dat may name one
    element as `1` and as `'1'` (its entries then grouped apart, `{1: {2: ..}, '1': {3: ..}}`),
    which `json.dumps` wrote as two "1" keys of one object — JSON the reader refuses. Two values
    for one entry are the data's own error."""
    if not isinstance(raw, dict):
        return raw
    out: dict = {}
    for key, value in raw.items():
        text = key if isinstance(key, str) else json.dumps(key)
        _put(out, text, _merged(value, source, name, path + (text,)), source, name,
             path + (text,))
    return out


def _put(out: dict, text: str, value: Any, source: DataSource, name: str, path: tuple) -> None:
    if text not in out:
        out[text] = value
    elif isinstance(out[text], dict) and isinstance(value, dict):
        for key, inner in value.items():
            _put(out[text], key, inner, source, name, path + (key,))
    else:
        raise source.error(f"param `{name}` gives the entry [{', '.join(path)}] twice, under "
                           "two spellings of one element", name)


def _plain(raw: Any) -> Any:
    """JSON's spelling of infinities ("inf", "-inf", which the reader takes)."""
    if isinstance(raw, dict):
        return {k: _plain(v) for k, v in raw.items()}
    if isinstance(raw, list):
        return [_plain(v) for v in raw]
    if isinstance(raw, float) and math.isinf(raw):
        return "inf" if raw > 0 else "-inf"
    return raw
