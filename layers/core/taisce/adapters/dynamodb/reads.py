"""The recall's reads (Query, BatchGetItem) sent as signed HTTP requests, without
botocore's per-call client machinery; anything but a clean answer goes through the
client as before.

A hops-2 recall is ~11 calls (up to ~40: a Query per neighbouring entity), and on
this machine each call cost ~1.3-1.5 ms of CPU in botocore's client, spread thin over
its generic steps (the request dict, a dozen events, the serializer, the endpoint
rules, the user agent, signing, the HTTP exchange, the response dict, parsing, the
retry handler's bookkeeping); the calls of one wave share one interpreter, so their
CPU adds up and most of a recall's time above its round trips was that. The request
of these two operations is one JSON body and its answer is DynamoDB's JSON, which is
already the form the adapter reads (adapters/dynamodb/items.py), so here the body is
the client's own serialisation (`json.dumps` of the parameters, as botocore's JSON
serializer writes it), signed by botocore's SigV4 signer with the client's
credentials and region, and sent on a urllib3 connection pool (botocore's transport library)
with botocore's certificate bundle and the adapter's timeouts: about half the CPU a
call (docs/dynamodb.md, "What a recall costs").

Nothing of botocore's behaviour is re-made here: an answer is used only when it is a
200 whose CRC32 matches DynamoDB's `x-amz-crc32` header and that holds no binary value
(the one type whose parsed form differs from its JSON); any other answer (an error,
throttling, a wrong checksum) or a failure to send is sent again through the client,
whose retries, backoff, errors and parsing then apply unchanged. Reads are idempotent,
so the second send is safe. Event hooks on the client do not see a read answered
here (a test that injects faults through them builds its store with
`direct_reads=False`).
"""

from __future__ import annotations

import json
import logging
import zlib
from typing import Any

from .items import BINARY

logger = logging.getLogger(__name__)

_TARGET = "DynamoDB_20120810."
_CONTENT_TYPE = "application/x-amz-json-1.0"
# The client's method for each operation, for the fallback.
_METHODS = {"Query": "query", "BatchGetItem": "batch_get_item"}


def through_client(client: Any, operation: str, params: dict[str, Any]) -> dict[str, Any]:
    """The read sent through botocore's client (its retries, errors and parsing)."""
    result: dict[str, Any] = getattr(client, _METHODS[operation])(**params)
    return result


def usable(status: int, headers: Any, body: bytes) -> bool:
    """Whether an answer can be taken as sent: a 200, its CRC32 as DynamoDB says (the
    check botocore makes), no binary value."""
    if status != 200:
        return False
    crc = headers.get("x-amz-crc32")
    if crc is not None and int(crc) != zlib.crc32(body):
        return False
    return BINARY.search(body) is None


def sent_to(client: Any) -> str:
    """Where the client itself sends a Query: the URL its endpoint rules give (FIPS,
    dual-stack, GovCloud, an endpoint_url), not `client.meta.endpoint_url`, which can
    differ. With FIPS in us-gov-west-1 the latter names dynamodb-fips.us-gov-west-1
    while the rules send to dynamodb.us-gov-west-1 (GovCloud's regular endpoint is
    the FIPS one), so every direct read went to another host than the client's."""
    resolver = getattr(client, "_ruleset_resolver", None)
    if resolver is None:
        return str(client.meta.endpoint_url)
    endpoint = resolver.construct_endpoint(
        operation_model=client.meta.service_model.operation_model("Query"),
        call_args={},
        request_context={},
    )
    return str(endpoint.url)


class DirectReads:
    """Query and BatchGetItem of one botocore client, sent directly (see the module)."""

    def __init__(self, client: Any, *, connect_timeout: float, read_timeout: float, pool: int):
        import urllib3
        from botocore.httpsession import get_cert_path

        self.client = client
        self.url = sent_to(client).rstrip("/") + "/"
        self.region = client.meta.region_name
        # The client's own credentials provider (refreshed as the client's are).
        self._credentials = client._request_signer._credentials
        # One host, so one connection pool (a PoolManager looks the pool up by URL on
        # every request, a share of a recall's CPU: docs/measured-choices.md).
        secure = {"ca_certs": get_cert_path(True)} if self.url.startswith("https:") else {}
        self._http = urllib3.connection_from_url(
            self.url,
            maxsize=pool,
            timeout=urllib3.Timeout(connect=connect_timeout, read=read_timeout),
            retries=False,
            **secure,
        )
        self._path = urllib3.util.parse_url(self.url).path or "/"

    @classmethod
    def of(cls, client: Any, config: Any) -> DirectReads | None:
        """Direct reads for this client, or None if it has no credentials to sign with
        (then every read goes through the client)."""
        signer = getattr(client, "_request_signer", None)
        if getattr(signer, "_credentials", None) is None:
            return None
        return cls(
            client,
            connect_timeout=config.connect_timeout,
            read_timeout=config.read_timeout,
            pool=config.max_pool_connections,
        )

    def call(self, operation: str, params: dict[str, Any]) -> dict[str, Any]:
        """The answer of one Query or BatchGetItem, as the client would return it."""
        from botocore.auth import SigV4Auth
        from botocore.awsrequest import AWSRequest

        body = json.dumps(params).encode()
        try:
            request = AWSRequest(
                method="POST",
                url=self.url,
                data=body,
                headers={"X-Amz-Target": _TARGET + operation, "Content-Type": _CONTENT_TYPE},
            )
            credentials = self._credentials.get_frozen_credentials()
            SigV4Auth(credentials, "dynamodb", self.region).add_auth(request)
            reply = self._http.urlopen(
                "POST", self._path, body=body, headers=dict(request.headers.items())
            )
        except Exception:  # sending failed: the client's retries decide
            logger.debug("direct %s failed; sent through the client", operation, exc_info=True)
            return self._through_client(operation, params)
        if not usable(reply.status, reply.headers, reply.data):
            # Logged, so that a deploy where every direct read is refused (a signature
            # the service does not accept) shows it, not only as slower recalls.
            logger.info("direct %s answered %s; sent through the client", operation, reply.status)
            return self._through_client(operation, params)
        answer: dict[str, Any] = json.loads(reply.data)
        return answer

    def _through_client(self, operation: str, params: dict[str, Any]) -> dict[str, Any]:
        return through_client(self.client, operation, params)

    def close(self) -> None:
        self._http.close()
