"""Logged exceptions keep their type and frames but never their message.

The messages of real exceptions quote what they failed on (pydantic repeats the
input value); the service's formatter must drop them, chained causes included, and
the domain's plain loggers must reach that formatter.
"""

from __future__ import annotations

import json
import logging
import sys

import pytest
from pydantic import BaseModel, ValidationError

from taisce.api.logs import WITHHELD, RedactingFormatter, logger
from taisce.domain import question_vector as recall
from taisce.service import memory

MARKER = "Qmarker-7f3a9c stored words"


class Strict(BaseModel):
    count: int


def record_of(exc: BaseException) -> logging.LogRecord:
    try:
        raise exc
    except BaseException:
        info = sys.exc_info()
    return logging.LogRecord("taisce", logging.ERROR, __file__, 1, "failed", None, info)


def pydantic_error() -> ValidationError:
    try:
        Strict.model_validate({"count": MARKER})
    except ValidationError as exc:
        return exc
    raise AssertionError("the model accepted a string")


def test_a_pydantic_error_keeps_its_type_and_frames_but_not_the_input() -> None:
    error = pydantic_error()
    assert MARKER in str(error)  # what an unredacted log would have held
    line = json.loads(RedactingFormatter(serialize_stacktrace=False).format(record_of(error)))
    assert line["exception_name"] == "ValidationError"
    assert f"ValidationError: {WITHHELD}" in line["exception"]
    assert "test_log_redaction.py" in line["exception"]  # the frames are kept
    assert MARKER not in json.dumps(line)


def test_a_chained_cause_is_withheld_too() -> None:
    try:
        try:
            raise KeyError(MARKER)
        except KeyError as inner:
            raise RuntimeError(f"while handling {MARKER}") from inner
    except RuntimeError as outer:
        error = outer
    error.add_note(MARKER)
    line = json.loads(RedactingFormatter(serialize_stacktrace=False).format(record_of(error)))
    assert "KeyError" in line["exception"] and "RuntimeError" in line["exception"]
    assert MARKER not in json.dumps(line)


@pytest.mark.parametrize("module", [memory, recall])
def test_the_domain_loggers_reach_the_redacting_formatter(module: object) -> None:
    child = module.logger  # type: ignore[attr-defined]
    assert child.name.startswith("taisce.") and child.propagate
    parent = logging.getLogger("taisce")
    assert parent is logger._logger
    assert parent.handlers
    assert all(isinstance(h.formatter, RedactingFormatter) for h in parent.handlers)
