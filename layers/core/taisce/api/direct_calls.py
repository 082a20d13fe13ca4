"""The calls sent on urllib3 2 directly, each an X-Ray subsegment of its own.

X-Ray's SDK (which Powertools' Tracer drives: its `patch_modules` are the SDK's)
patches botocore, so every SDK call is a subsegment with its operation, and http.client
(`httplib`), whose patch wraps `HTTPConnection._send_request`; urllib3 2 sends with
`putrequest` and `endheaders` and never calls it, and the SDK has no urllib3 patch. So
the table's direct reads (adapters/dynamodb/reads.py) and the OpenSearch collection's
requests (opensearch-py's `Urllib3HttpConnection`) were seen only as part of the store's
or the index's subsegment. While tracing, each is wrapped here as the SDK's own patches
wrap their calls: a direct read as botocore's are (name `dynamodb`, namespace `aws`, its
operation, table and region), an OpenSearch request as an HTTP call (its host,
namespace `remote`, method, path and status). Never a body, a query string, a header
or an exception's message (a stored text or a credential may be in any of them): a
failure is a fault, error or throttle flag only.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

# Set on a wrapped method, so that wrapping twice is wrapping once.
_WRAPPED = "__taisce_traced__"


def patch(recorder: Any) -> None:
    """Wrap the direct reads, and the OpenSearch connection if opensearch-py is loaded
    (the functions without a vector index never import it)."""
    from ..adapters.dynamodb.reads import DirectReads

    _wrap(DirectReads, "call", functools.partial(_direct_read, recorder))
    connection = sys.modules.get("opensearchpy.connection.http_urllib3")
    if connection is not None:
        _wrap(
            connection.Urllib3HttpConnection,
            "perform_request",
            functools.partial(_opensearch_request, recorder),
        )


def _wrap(owner: type, name: str, wrapper: Callable[..., Any]) -> None:
    original = getattr(owner, name)
    if getattr(original, _WRAPPED, False):
        return

    @functools.wraps(original)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        return wrapper(original, *args, **kwargs)

    setattr(wrapped, _WRAPPED, True)
    setattr(owner, name, wrapped)


@contextmanager
def subsegment(recorder: Any, name: str, namespace: str = "local") -> Iterator[Any]:
    """A subsegment (None where there is no segment to hold it), ended however the
    call ends; a failure is flagged a fault, never recorded with its message (the
    SDK's own `in_subsegment` records the exception's message and stack)."""
    opened = recorder.begin_subsegment(name, namespace)
    try:
        yield opened
    except Exception:
        flagged = getattr(opened, "error", False) or getattr(opened, "throttle", False)
        if opened is not None and not flagged:
            opened.add_fault_flag()
        raise
    finally:
        if opened is not None:
            recorder.end_subsegment()


def _table(params: dict[str, Any]) -> str | None:
    """The table a Query names, or a BatchGetItem's one table."""
    named = params.get("TableName")
    if named is None and len(params.get("RequestItems") or {}) == 1:
        (named,) = params["RequestItems"]
    return str(named) if named is not None else None


def _direct_read(
    recorder: Any, call: Callable[..., Any], reads: Any, operation: str, params: dict[str, Any]
) -> Any:
    with subsegment(recorder, "dynamodb", "aws") as opened:
        if opened is not None:
            meta = {"operation": operation, "region": reads.region}
            table = _table(params)
            if table is not None:
                meta["table_name"] = table
            opened.set_aws(meta)
        return call(reads, operation, params)


def _opensearch_request(
    recorder: Any,
    call: Callable[..., Any],
    connection: Any,
    method: str,
    url: str,
    *args: Any,
    **kwargs: Any,
) -> Any:
    from urllib3.util import parse_url

    host = parse_url(connection.host).host or "opensearch"
    with subsegment(recorder, host, "remote") as opened:
        if opened is not None:
            opened.put_http_meta("method", method)
            # The path only: a query string may hold a document id or a search's terms.
            path = url.split("?", 1)[0]
            opened.put_http_meta("url", connection.host + connection.url_prefix + path)
        try:
            answer = call(connection, method, url, *args, **kwargs)
        except Exception as failure:
            status = getattr(failure, "status_code", None)
            if opened is not None and isinstance(status, int):
                opened.put_http_meta("status", status)
            raise
        if opened is not None:
            opened.put_http_meta("status", answer[0])
        return answer
