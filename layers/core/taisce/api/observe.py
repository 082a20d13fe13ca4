"""Powertools at the Lambda edge: the logger's Lambda context and correlation id, the
metrics (CloudWatch's embedded metric format, EMF, on stdout) and the tracer (X-Ray).

Every API function's handler is `observed` (api/resolver.py, make_handler), and so is
the worker's. The domain never sees Powertools: a recall's steps are timed through
the `Spans` port (domain/ports/spans.py), which `XRaySpans` answers with X-Ray
subsegments, and the calls of the store, the vector index and the embedding model
through `traced`. The tracer exists only
where Powertools would trace (on Lambda, not under `sam local`, unless
POWERTOOLS_TRACE_DISABLED): elsewhere X-Ray's SDK is not even imported (the local
server runs without the AWS SDKs) and nothing is wrapped.

The tracer never records an event, an answer or an exception's message (they carry
credentials and stored memory): capture_response and capture_error are off here, not
only in the template's environment.
"""

from __future__ import annotations

import functools
import importlib
import os
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import replace
from typing import Any, TypeVar

from aws_lambda_powertools import Metrics, Tracer
from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.metrics import MetricUnit

from ..domain.ports.spans import NO_SPANS, Spans
from ..domain.recalled import RecallAnswer
from ..domain.semantic import Semantic
from .direct_calls import subsegment
from .logs import logger

SERVICE = "taisce"
# The template sets POWERTOOLS_METRICS_NAMESPACE; EMF cannot be written without one.
NAMESPACE = os.environ.get("POWERTOOLS_METRICS_NAMESPACE") or "Taisce"
# botocore: every AWS SDK call is a subsegment. Not httplib: X-Ray's patch of it wraps
# http.client's `_send_request`, which urllib3 2 never calls, so the calls sent on
# urllib3 directly (the table's direct reads, the OpenSearch collection) would still
# go unseen. Those are wrapped by api/direct_calls.py (trace_direct_calls), each a
# subsegment inside the store's or the vector index's call that made it.
PATCHED = ("botocore",)

metrics = Metrics(namespace=NAMESPACE, service=SERVICE)


def _tracer() -> Tracer | None:
    # Powertools' own test of whether it would trace here (its constructor imports
    # X-Ray's SDK, and so botocore, even to be disabled).
    if Tracer._is_tracer_disabled():
        return None
    made = Tracer(service=SERVICE, patch_modules=PATCHED)
    _sdk_errors_without_messages()
    return made


def _sdk_errors_without_messages() -> None:
    """X-Ray's botocore patch records a failed call's exception with its message, and a
    service's message may quote what was sent (DynamoDB's "Invalid UpdateExpression:
    ... near: ..." quotes the expression; a validation error may name a value). Its
    processor runs here as if the call had not failed (operation, region, the SDK's
    listed parameters), and the failure is recorded without a message: the HTTP status
    (which flags the subsegment an error, a throttle or a fault), the request id and
    the service's error code."""
    # The module, not the package's `patch` function of the same name.
    botocore_patch: Any = importlib.import_module("aws_xray_sdk.ext.botocore.patch")

    recorded = botocore_patch.aws_meta_processor
    if getattr(recorded, "without_messages", False):
        return

    def processor(
        wrapped: Any,
        instance: Any,
        args: Any,
        kwargs: Any,
        return_value: Any,
        exception: BaseException | None,
        subsegment: Any,
        stack: Any,
    ) -> None:
        recorded(wrapped, instance, args, kwargs, return_value, None, subsegment, stack)
        if exception is None:
            return
        response = getattr(exception, "response", None) or {}
        meta = response.get("ResponseMetadata") or {}
        status = meta.get("HTTPStatusCode")
        aws = dict(subsegment.aws or {})
        if meta.get("RequestId"):
            aws["request_id"] = meta["RequestId"]
        code = (response.get("Error") or {}).get("Code")
        aws["error_code"] = code or type(exception).__name__
        subsegment.set_aws(aws)
        if status:
            subsegment.put_http_meta("status", status)
        else:  # no answer (a connection or a client-side failure)
            subsegment.add_fault_flag()

    processor.without_messages = True  # type: ignore[attr-defined]
    botocore_patch.aws_meta_processor = processor


tracer = _tracer()

Handler = Callable[[dict[str, Any], Any], Any]
_T = TypeVar("_T")


def tracing() -> bool:
    return tracer is not None


def observed(handler: Handler, *, correlated: bool = True) -> Handler:
    """The handler with Powertools around it: X-Ray's handler subsegment (no event, no
    answer, no error message), the invocation's metrics written as one EMF document
    when it returns, and each log line carrying the Lambda context and, for an API
    event (`correlated`), API Gateway's request id as `correlation_id`. Called without
    a context (a test, a script: no Lambda) or under `taisce serve`, it runs bare."""
    traced = (
        tracer.capture_lambda_handler(handler, capture_response=False, capture_error=False)
        if tracer is not None
        else handler
    )

    def measured(event: dict[str, Any], context: Any) -> Any:
        try:
            return traced(event, context)
        finally:
            _publish()

    in_context = logger.inject_lambda_context(
        measured,
        correlation_id_path=correlation_paths.API_GATEWAY_HTTP if correlated else None,
        clear_state=True,
    )

    @functools.wraps(handler)
    def entry(event: dict[str, Any], context: Any) -> Any:
        if not measured_here(context):
            try:
                return handler(event, context)
            finally:
                metrics.clear_metrics()
        return in_context(event, context)

    return entry


def measured_here(context: Any) -> bool:
    """Whether an invocation is Lambda's, to be logged and measured: not without a
    context (a test, a script) nor under `taisce serve`, whose stand-in context says
    it is local (local/gateway.py): the local server prints no metrics or log line per
    request on its standard output."""
    return context is not None and not getattr(context, "local", False)


def _publish() -> None:
    """The invocation's metrics as one EMF line, if it counted any (Powertools'
    log_metrics would warn on every invocation without), then forgotten."""
    if metrics.metric_set:
        metrics.flush_metrics()
    metrics.clear_metrics()


# -- recall ---------------------------------------------------------------------------


def count_recall(answer: RecallAnswer, seconds: float) -> None:
    """A recall's figures, as metrics and as one log line (no question, no text)."""
    metrics.add_metric(name="RecallLatency", unit=MetricUnit.Milliseconds, value=seconds * 1000)
    metrics.add_metric(name="RecallCharacters", unit=MetricUnit.Count, value=answer.characters)
    metrics.add_metric(name="RecallTruncated", unit=MetricUnit.Count, value=int(answer.truncated))
    metrics.add_metric(
        name="RecallDegradedSteps", unit=MetricUnit.Count, value=len(answer.degraded)
    )
    logger.info(
        "recalled",
        extra={
            "milliseconds": round(seconds * 1000, 1),
            "characters": answer.characters,
            "truncated": answer.truncated,
            "degraded": list(answer.degraded),
        },
    )


# -- the worker -----------------------------------------------------------------------


def count_worker_lag(seconds: float) -> None:
    """How long a work message waited in the queue before its pass began."""
    metrics.add_metric(name="WorkerLag", unit=MetricUnit.Milliseconds, value=seconds * 1000)


# template.yaml's ErasuresStuckAlarm watches it.
ERASURES_PENDING = "ErasuresPending"


def count_erasures_pending(pending: int) -> None:
    metrics.add_metric(name=ERASURES_PENDING, unit=MetricUnit.Count, value=pending)


# -- spans: recall steps and store calls ----------------------------------------------


class XRaySpans:
    """Spans as X-Ray subsegments (domain/ports/spans.py)."""

    def __init__(self, traced: Tracer) -> None:
        self.provider = traced.provider

    def span(self, name: str) -> AbstractContextManager[object]:
        # Not the SDK's in_subsegment: it records a failure's message (a store's error
        # may quote a stored value); here a failure is a fault flag only.
        return subsegment(self.provider, name)


def spans() -> Spans:
    """Where a recall's steps are timed: X-Ray while tracing, else nowhere."""
    return XRaySpans(tracer) if tracer is not None else NO_SPANS


class Traced:
    """An adapter (the store, the vector index, the embedding model) with each of its
    calls in a subsegment named `<part>.<method>`; every other attribute (a store's
    capabilities) passed through."""

    def __init__(self, part: object, name: str, spans: Spans) -> None:
        self._part = part
        self._name = name
        self._spans = spans

    def __getattr__(self, attribute: str) -> Any:
        found = getattr(self._part, attribute)
        if attribute.startswith("_") or not callable(found):
            return found
        return _in_span(self._spans, f"{self._name}.{attribute}", found)


def _in_span(spans: Spans, name: str, call: Callable[..., _T]) -> Callable[..., _T]:
    @functools.wraps(call)
    def spanned(*args: Any, **kwargs: Any) -> _T:
        with spans.span(name):
            return call(*args, **kwargs)

    return spanned


def traced(part: _T, name: str) -> _T:
    """The adapter, traced call by call while tracing (else the adapter itself)."""
    if tracer is None:
        return part
    return Traced(part, name, XRaySpans(tracer))  # type: ignore[return-value]


def trace_direct_calls() -> None:
    """While tracing, each call sent on urllib3 directly a subsegment of its own
    (api/direct_calls.py); called once the store and the vector index are open."""
    if tracer is None:
        return
    from .direct_calls import patch

    patch(tracer.provider)


def traced_semantic(semantic: Semantic | None) -> Semantic | None:
    """The embedding model's and the vector index's calls traced (Bedrock's are also
    seen by the botocore patch; OpenSearch's only here)."""
    if semantic is None or tracer is None:
        return semantic
    return replace(
        semantic,
        embedder=traced(semantic.embedder, "embedder"),
        index=traced(semantic.index, "vectors"),
    )
