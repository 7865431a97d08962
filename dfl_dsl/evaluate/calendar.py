"""MathProg's calendar functions of data, `str2time(s, f)` (seconds since 1970-01-01 00:00:00
UTC of a text read by format f) and `time2str(t, f)` (the text of t by format f). GLPK's cal
example computes each month's first weekday and length with them. They read no clock (GLPK's
`gmtime()` does, and stays refused: a model here is the same at every bind), so they are plain
functions of data: both work in UTC, as GLPK does.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
# what each conversion of `str2time` reads, and which field it sets
_FIELDS = {"Y": (r"[+-]?\d{1,4}", "year"), "y": (r"\d{1,2}", "year2"), "m": (r"\d{1,2}", "month"),
           "d": (r"\d{1,2}", "day"), "H": (r"\d{1,2}", "hour"), "M": (r"\d{1,2}", "minute"),
           "S": (r"\d{1,2}", "second"), "b": (r"[A-Za-z]+", "name"), "h": (r"[A-Za-z]+", "name"),
           "B": (r"[A-Za-z]+", "name")}


class CalendarError(ValueError):
    """A text that doesn't fit its format, or a date that doesn't exist."""


def str2time(text: str, fmt: str) -> float:
    """Seconds since the epoch; the fields the format leaves out are 1970, January, the
    first, midnight (GLPK's defaults)."""
    pattern, fields = [], []
    k = 0
    while k < len(fmt):
        if fmt[k] == "%" and k + 1 < len(fmt):
            code = fmt[k + 1]
            if code == "%":
                pattern.append("%")
            elif code in _FIELDS:
                regex, field = _FIELDS[code]
                pattern.append(f"({regex})")
                fields.append(field)
            else:
                raise CalendarError(f"`str2time` doesn't read `%{code}`")
            k += 2
        else:
            pattern.append(r"\s*" if fmt[k].isspace() else re.escape(fmt[k]))
            k += 1
    found = re.fullmatch(r"\s*" + "".join(pattern) + r"\s*", text)
    if found is None:
        raise CalendarError(f"\"{text}\" doesn't fit the format \"{fmt}\"")
    parts = {"year": 1970, "month": 1, "day": 1, "hour": 0, "minute": 0, "second": 0}
    for field, value in zip(fields, found.groups(), strict=True):
        if field == "name":
            if value[:3].lower() not in _MONTHS:
                raise CalendarError(f"\"{value}\" is no month")
            parts["month"] = _MONTHS.index(value[:3].lower()) + 1
        elif field == "year2":
            parts["year"] = int(value) + (1900 if int(value) >= 69 else 2000)
        else:
            parts[field] = int(value)
    try:
        when = datetime(tzinfo=UTC, **parts)
    except ValueError as exc:
        raise CalendarError(f"\"{text}\": {exc}") from None
    return (when - _EPOCH).total_seconds()


def time2str(seconds: float, fmt: str) -> str:
    """The text of a time by `strftime`'s conversions (UTC, English names)."""
    try:
        when = _EPOCH + timedelta(seconds=float(seconds))
    except OverflowError:
        raise CalendarError(f"{seconds:g} seconds is outside the calendar") from None
    # one conversion at a time: `%Y` with four digits below the year 1000 too
    return re.sub(r"%.", lambda m: f"{when.year:04d}" if m.group() == "%Y"
                  else when.strftime(m.group()), fmt)
