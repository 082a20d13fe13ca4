"""Times as the store keeps them: RFC 3339 in UTC with a Z. Storing, recall's time
filters and erasure's audit records all write and compare this one form."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Annotated

from pydantic import AfterValidator, Field

_RFC3339 = re.compile(r"\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})")


def timestamp(moment: datetime) -> str:
    """RFC 3339 in UTC with a Z, the one form the store keeps."""
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")


def parse_timestamp(value: str) -> datetime:
    return datetime.fromisoformat(value.upper().replace("Z", "+00:00"))


def _rfc3339(value: str) -> str:
    """An RFC 3339 date-time with an offset, returned in UTC (no Unix times, no
    missing seconds); one that leaves the calendar once in UTC is refused."""
    if not _RFC3339.fullmatch(value):
        raise ValueError("must be an RFC 3339 date-time with an offset, e.g. 2026-01-31T09:00:00Z")
    # Python keeps at most microseconds: extra digits of a fraction are dropped.
    value = re.sub(r"(\.\d{6})\d+", r"\1", value)
    try:
        return timestamp(parse_timestamp(value))
    except (ValueError, OverflowError):
        raise ValueError("must be a valid date-time within years 1-9999 in UTC") from None


# The format tells API clients (and the OpenAPI description) what is accepted.
Timestamp = Annotated[
    str, AfterValidator(_rfc3339), Field(json_schema_extra={"format": "date-time"})
]
