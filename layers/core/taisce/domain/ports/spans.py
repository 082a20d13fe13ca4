"""Spans: named stretches of a request a tracer may time (AWS: X-Ray subsegments).

The domain marks where its steps begin and end; what records them, if anything, is
the edge's choice (api/observe.py). The default records nothing and costs a null
context manager per step.
"""

from __future__ import annotations

from contextlib import AbstractContextManager, nullcontext
from typing import Protocol


class Spans(Protocol):
    def span(self, name: str) -> AbstractContextManager[object]: ...


class NoSpans:
    def span(self, name: str) -> AbstractContextManager[object]:
        return nullcontext()


NO_SPANS: Spans = NoSpans()
