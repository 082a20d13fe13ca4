"""Requests to an OpenSearch Serverless collection: a SigV4-signed client, and calls
that retry what can pass on a second try.

Throttling (429) and server errors (5xx, lost connections) are retried with full-jitter
exponential backoff a bounded number of times, bulk items included; then, and on any
other failure, VectorIndexError. Error messages name the operation, the HTTP status, the
error type and item ids, never a reason string (OpenSearch quotes field values in some)
nor any stored text or vector.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import Any

from opensearchpy import OpenSearch, Urllib3AWSV4SignerAuth, Urllib3HttpConnection
from opensearchpy.exceptions import ConnectionError as OpenSearchConnectionError
from opensearchpy.exceptions import OpenSearchException, TransportError

from ...domain.ports.vectors import VectorIndexError

_ERROR_TYPE = re.compile(r"[A-Za-z_.]{1,80}")
# One `_bulk` action: (action line, source line or None, our item id).
Action = tuple[dict[str, Any], dict[str, Any] | None, str]


def make_client(
    endpoint: str,
    region: str,
    *,
    credentials: Any = None,
    pool_maxsize: int = 16,
    timeout: float = 10.0,
) -> OpenSearch:
    """An opensearch-py client for an aoss collection endpoint, signed with SigV4.

    `endpoint` is the collection endpoint, with or without `https://`. Credentials come
    from boto3's default chain unless given. The transport does not retry: the adapter
    retries with backoff, which the transport's own retries lack.
    """
    host = re.sub(r"^https?://", "", endpoint.strip()).rstrip("/")
    if not host or "/" in host:
        raise ValueError(
            "endpoint must be a collection host, e.g. https://id.region.aoss.amazonaws.com"
        )
    if credentials is None:
        import boto3

        credentials = boto3.Session().get_credentials()
        if credentials is None:
            raise VectorIndexError("no AWS credentials found for OpenSearch Serverless")
    return OpenSearch(
        hosts=[{"host": host, "port": 443}],
        http_auth=Urllib3AWSV4SignerAuth(credentials, region, "aoss"),
        use_ssl=True,
        verify_certs=True,
        connection_class=Urllib3HttpConnection,
        pool_maxsize=pool_maxsize,
        timeout=timeout,
        max_retries=0,
        retry_on_status=(),
    )


def error_type(exc: TransportError) -> str:
    error = exc.error
    return error if isinstance(error, str) and _ERROR_TYPE.fullmatch(error) else ""


@dataclass
class Requests:
    """The calls of one index, with the retry rules above."""

    client: OpenSearch
    index_name: str
    max_attempts: int
    base_delay: float
    max_delay: float
    sleep: Callable[[float], None]
    jitter: Callable[[float, float], float]

    def backoff(self, attempt: int) -> None:
        self.sleep(self.jitter(0.0, min(self.max_delay, self.base_delay * 2**attempt)))

    def call(self, what: str, request: Callable[[], Any], tolerate: Collection[str] = ()) -> Any:
        """Run one request, retrying throttling and server errors with backoff.

        An error whose type is in `tolerate` is returned rather than raised.
        """
        for attempt in range(self.max_attempts):
            try:
                return request()
            except TransportError as exc:
                if tolerate and error_type(exc) in tolerate:
                    return exc
                status = exc.status_code
                retryable = (
                    isinstance(exc, OpenSearchConnectionError)
                    or status == 429
                    or (isinstance(status, int) and status >= 500)
                )
                if retryable and attempt + 1 < self.max_attempts:
                    self.backoff(attempt)
                    continue
                detail = f"HTTP {status}" if isinstance(status, int) else type(exc).__name__
                kind = error_type(exc)
                suffix = (
                    f" {kind}" if kind and not isinstance(exc, OpenSearchConnectionError) else ""
                )
                tried = f" after {attempt + 1} attempts" if attempt else ""
                raise VectorIndexError(
                    f"OpenSearch {what} failed{tried}: {detail}{suffix}"
                ) from None
            except OpenSearchException as exc:
                raise VectorIndexError(f"OpenSearch {what} failed: {type(exc).__name__}") from None
        raise AssertionError("unreachable")  # pragma: no cover

    def search(self, what: str, body: dict[str, Any]) -> list[dict[str, Any]]:
        response = self.call(what, lambda: self.client.search(index=self.index_name, body=body))
        try:
            hits = response["hits"]["hits"]
            if not isinstance(hits, list):
                raise TypeError
            return hits
        except (KeyError, TypeError):
            raise VectorIndexError(f"OpenSearch {what} returned an unexpected response") from None

    def bulk(self, what: str, actions: list[Action]) -> dict[str, list[str]]:
        """One `_bulk` request for (action, source, item id) triples; failed items that
        were throttled or hit a server error are sent again, with backoff. Returns the
        `_id`s the service assigned to the indexed documents, by item id."""
        pending = actions
        assigned: dict[str, list[str]] = {}
        for attempt in range(self.max_attempts):
            items = self._bulk_items(what, pending)
            if items is None:
                return assigned
            failed = _bulk_failures(pending, items, assigned)
            if not failed:
                return assigned
            retryable = all(status == 429 or status >= 500 for _, status, _ in failed)
            if retryable and attempt + 1 < self.max_attempts:
                pending = [sent for sent, _, _ in failed]
                self.backoff(attempt)
                continue
            ids = sorted({sent[2] for sent, _, _ in failed})
            kinds = sorted({kind for _, _, kind in failed if _ERROR_TYPE.fullmatch(kind)})
            raise VectorIndexError(
                f"OpenSearch {what} failed for {len(ids)} item(s): {', '.join(ids)}"
                + (f" ({', '.join(kinds)})" if kinds else "")
            )

    def _bulk_items(self, what: str, pending: list[Action]) -> list[Any] | None:
        """Sends one `_bulk` of `pending`; its per-item results, one per action, or None
        when the answer reports no errors and lists no items."""
        lines: list[str] = []
        for action, source, _ in pending:
            lines.append(json.dumps(action, separators=(",", ":")))
            if source is not None:
                lines.append(json.dumps(source, separators=(",", ":")))
        body = "\n".join(lines) + "\n"
        response = self.call(what, lambda: self.client.bulk(body=body, index=self.index_name))
        if not isinstance(response, dict):
            raise VectorIndexError(f"OpenSearch {what} returned an unexpected response")
        items = response.get("items")
        if not response.get("errors") and not isinstance(items, list):
            return None
        if not isinstance(items, list) or len(items) != len(pending):
            raise VectorIndexError(f"OpenSearch {what} returned an unexpected response")
        return items


def _bulk_failures(
    pending: list[Action], items: list[Any], assigned: dict[str, list[str]]
) -> list[tuple[Action, int, str]]:
    """The actions that failed, with their status and error type; the `_id`s of the
    documents indexed are added to `assigned` by item id."""
    failed: list[tuple[Action, int, str]] = []
    for sent, item in zip(pending, items, strict=True):
        result = next(iter(item.values()), {}) if isinstance(item, dict) else {}
        error = result.get("error") if isinstance(result, dict) else None
        if error is None:
            doc_id = result.get("_id") if isinstance(result, dict) else None
            if "index" in sent[0] and isinstance(doc_id, str):
                assigned.setdefault(sent[2], []).append(doc_id)
            continue
        status = result.get("status")
        kind = error.get("type", "") if isinstance(error, dict) else ""
        failed.append((sent, status if isinstance(status, int) else 0, str(kind)))
    return failed
