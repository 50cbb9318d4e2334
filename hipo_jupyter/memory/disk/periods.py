"""The calendar of the tree: days, ISO weeks and months, and which week belongs to which month.

Weeks are ISO weeks (`2026-W11`, Monday to Sunday) and belong to the month of their Thursday, so
each week lives in exactly one month. Years are always written with four digits. Kept apart from
the compaction chain because the Topics Index, recall and the server need the same calendar.
"""

from __future__ import annotations

import calendar
from datetime import date, timedelta
from functools import lru_cache

# Recall names the week and month of every hit's day (its drill-down path, the periods its
# raw hits answer): a year's context asks ~280 times per call over a few dozen days, so the
# two are kept per day and per week.
DAYS_KEPT = 4096

# The days a memory keeps: the raw logs' names, requests and imports are checked against them.
EARLIEST_DAY = date(1900, 1, 1)
LATEST_DAY = date(2199, 12, 31)


def in_range(day: date) -> bool:
    """Whether `day` is one a memory keeps (a raw log's name, a request's date)."""
    return EARLIEST_DAY <= day <= LATEST_DAY


@lru_cache(maxsize=DAYS_KEPT)
def week_id(day: date) -> str:
    year, week, _ = day.isocalendar()
    return f"{year:04d}-W{week:02d}"


def week_bounds(week: str) -> tuple[date, date]:
    """The Monday and the Sunday of an ISO week `YYYY-Www`."""
    year, number = week.split("-W")
    monday = date.fromisocalendar(int(year), int(number), 1)
    return monday, monday + timedelta(days=6)


@lru_cache(maxsize=DAYS_KEPT)
def week_month(week: str) -> str:
    """A week belongs to the month of its Thursday (so each week lives in exactly one month)."""
    thursday = week_bounds(week)[0] + timedelta(days=3)
    return month_id(thursday)


def month_id(day: date) -> str:
    return f"{day.year:04d}-{day.month:02d}"


def month_bounds(month: str) -> tuple[date, date]:
    """The first and the last day of a month `YYYY-MM`."""
    year, number = (int(part) for part in month.split("-"))
    return date(year, number, 1), date(year, number, calendar.monthrange(year, number)[1])


def period_start(level: str, period: str) -> date:
    """The first day of a node's period (daily `YYYY-MM-DD`, weekly `YYYY-Www`, monthly)."""
    if level == "daily":
        return date.fromisoformat(period)
    if level == "weekly":
        return week_bounds(period)[0]
    return month_bounds(period)[0]
