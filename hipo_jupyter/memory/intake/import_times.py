"""The times of imported turns: ISO dates and date-times, epoch seconds, and LoCoMo's
"1:56 pm on 8 May, 2023" (`importers`). An aware time is converted to local time, because a
raw log is the day as its writer lived it; a day outside 1900..2199 is refused.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

from ..requests import in_range

_LOCOMO_TIME = re.compile(
    r"\s*(\d{1,2}):(\d{2})\s*([ap])\.?m\.?\s+on\s+(\d{1,2})\s+([A-Za-z]+),?\s+(\d{4})\s*\Z",
    re.IGNORECASE,
)
_MONTHS = {
    name: number
    for number, names in enumerate(
        [
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ],
        start=1,
    )
    for name in names
}


def parse_locomo_time(text: str) -> datetime:
    """LoCoMo's session time, "1:56 pm on 8 May, 2023" -> datetime(2023, 5, 8, 13, 56)."""
    match = _LOCOMO_TIME.match(text)
    if not match:
        raise ValueError(f"{text!r} is not a time like '1:56 pm on 8 May, 2023'")
    hour, minute, half, day, month_name, year = match.groups()
    month = _MONTHS.get(month_name.lower())
    if month is None:
        raise ValueError(f"{month_name!r} in {text!r} is not a month")
    hour_24 = int(hour) % 12 + (12 if half.lower() == "p" else 0)
    return datetime(int(year), month, int(day), hour_24, int(minute))


def parse_time(value: Any) -> datetime:
    """An ISO date or date-time, epoch seconds, or a LoCoMo time; an aware time is converted
    to local time, because a raw log is the day as its writer lived it."""
    if isinstance(value, bool) or value is None:
        raise ValueError(f"{value!r} is not a time")
    if isinstance(value, int | float):
        try:
            moment = datetime.fromtimestamp(value, UTC)
        except (OverflowError, OSError, ValueError):
            raise ValueError(f"{value!r} seconds is not a time (out of range)") from None
    elif isinstance(value, str):
        text = value.strip()
        try:
            moment = datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
        except ValueError:
            moment = parse_locomo_time(text)
    else:
        raise ValueError(f"{value!r} is not a time")
    try:
        local = moment.astimezone() if moment.tzinfo is not None else moment
    except (OverflowError, OSError):
        raise ValueError(f"{value!r} is out of range") from None
    if not in_range(local.date()):
        raise ValueError(
            f"{value!r} is out of range (memory keeps days from 1900-01-01 to 2199-12-31)"
        )
    return local
