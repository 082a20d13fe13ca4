"""The service's logger: Powertools JSON lines, with exception messages withheld.

An exception's message can quote what it failed on: a pydantic error repeats the
input value, a driver error the row, an extractor error the model's answer. So a
logged exception keeps its type and the frames of its traceback (file, line,
function) but never its message, notes or value. Loggers under `taisce.` (the
domain's plain `logging` loggers) propagate to this one and get the same treatment.
"""

from __future__ import annotations

import logging
import traceback
from types import TracebackType

from aws_lambda_powertools import Logger
from aws_lambda_powertools.logging.formatter import LambdaPowertoolsFormatter

ExcInfo = tuple[type[BaseException], BaseException, TracebackType | None]

WITHHELD = "(message withheld: it can quote stored text)"


def redacted_traceback(exc_info: ExcInfo) -> str:
    """A traceback's frames and exception types, chained causes included, no messages."""
    kind, error, tb = exc_info
    parts: list[str] = []
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        frames = traceback.extract_tb(current.__traceback__ if current is not error else tb)
        lines = [f'  File "{f.filename}", line {f.lineno}, in {f.name}' for f in frames]
        parts.append(
            "\n".join(["Traceback (most recent call last):", *lines])
            + f"\n{type(current).__name__}: {WITHHELD}"
        )
        current = current.__cause__ or current.__context__
    return "\n\nwhich led to\n\n".join(reversed(parts)) or kind.__name__


class RedactingFormatter(LambdaPowertoolsFormatter):
    def formatException(self, ei) -> str:  # type: ignore[no-untyped-def]
        return redacted_traceback(ei)

    def _extract_log_exception(self, log_record: logging.LogRecord):  # type: ignore[no-untyped-def]
        text, name, _notes = super()._extract_log_exception(log_record)
        return text, name, None


def make_logger() -> Logger:
    # serialize_stacktrace would add the exception object itself (its message).
    return Logger(service="taisce", logger_formatter=RedactingFormatter(serialize_stacktrace=False))


# The one service logger: handlers, the workers and the local gateway log through it.
logger = make_logger()
