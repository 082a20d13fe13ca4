"""domain.extraction.failures_to_replay: which failed extractions a replay takes."""

from __future__ import annotations

from taisce.domain.extraction import failures_to_replay
from taisce.domain.model import ExtractionFailure


def failure(message_id: str) -> ExtractionFailure:
    return ExtractionFailure("p", message_id, "refused", 3, "2026-12-03T07:00:00Z")


def test_every_failure_or_only_those_of_the_messages_named_in_order() -> None:
    failures = [failure("a"), failure("b"), failure("c")]
    assert list(failures_to_replay(failures, None)) == failures
    assert list(failures_to_replay(failures, ["c", "a", "x"])) == [failures[0], failures[2]]
    assert list(failures_to_replay(failures, [])) == []
