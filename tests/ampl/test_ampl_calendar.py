"""MathProg's calendar functions of data (`str2time`, `time2str`, in UTC) and an element given
to a numeric param read as its number (`"5"` is 5; a text that is no number is an error)."""

from __future__ import annotations

import calendar

import pytest

import dfl_dsl as dfl

MONTHS = """\
param year := 2024;
param first{m in 1..12}, integer, >= 0, <= 6 :=
   time2str(str2time(year & "-" & m & "-01", "%Y-%m-%d"), "%w");
param days{m in 1..12} :=
   (str2time(year + (if m < 12 then 0 else 1) & "-" & (if m < 12 then m + 1 else 1) & "-01",
             "%Y-%m-%d") - str2time(year & "-" & m & "-01", "%Y-%m-%d")) / 86400;
var x{m in 1..12} >= 0, <= 100 * first[m] + days[m];
maximize o: sum{m in 1..12} x[m];
"""


def test_weekdays_and_month_lengths_from_the_calendar_functions():
    want = 0
    for m in range(1, 13):
        weekday, days = calendar.monthrange(2024, m)  # (Monday = 0); `%w` counts from Sunday
        want += 100 * ((weekday + 1) % 7) + days
    assert dfl.parse(MONTHS).bind().solve().objective == pytest.approx(want)


@pytest.mark.parametrize("value, seconds", [
    ('str2time("Mar 5", "%b %d")', (31 + 28 + 4) * 86400),
    ('str2time("1969-12-31 23:00:00", "%Y-%m-%d %H:%M:%S")', -3600),
    ('time2str(86400 * 365, "%Y%m%d")', 19710101),
])
def test_str2time_reads_its_fields_and_time2str_writes_them(value, seconds):
    text = f"param t := {value};\nvar x >= t;\nminimize o: x;\n"
    assert dfl.parse(text).bind().solve().objective == pytest.approx(seconds)


@pytest.mark.parametrize("value, message", [
    ('substr("abc", 1, 2)', 'the param holds numbers, and this is the text "ab"'),
    ('str2time("2024-13-01", "%Y-%m-%d")', "month must be in 1..12"),
    ('str2time("March", "%d")', "doesn't fit the format"),
])
def test_texts_that_are_no_number_or_no_date_are_located_errors(value, message):
    text = f"param t := {value};\nvar x >= t;\nminimize o: x;\n"
    with pytest.raises(dfl.DflError, match=message) as caught:
        dfl.parse(text, "m.mod").bind()
    assert caught.value.pos.line == 1
