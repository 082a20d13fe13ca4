"""The table's I/O: the botocore client (built lazily, configured once), reads in
waves from one thread pool, batch writes, and one `_transact` for every
TransactWriteItems, which reads a cancellation's reasons in one place.

What a caller does when DynamoDB cancels its transaction is its `Retry` rule. The
rules differ because the callers do: a batch of facts or messages leaves out a unit
whose id is already taken and stores the rest (DROP_FAILED); a merge's move leaves out
a fact deleted meanwhile and sends the rest at once (DROP_FAILED_AT_ONCE); every other
write is sent again on conflicts and throttling, and a failed condition is its answer
(RESEND): a throttled credential or deletion is not "already stored" or "gone".
"""

from __future__ import annotations

import logging
import random
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from itertools import islice
from typing import Any, Generic, TypeVar

from .items import lift_items
from .keys import Item
from .reads import DirectReads, through_client

logger = logging.getLogger(__name__)

# DynamoDB's own limits.
TRANSACTION_ITEMS = 100
TRANSACTION_BYTES = 4 * 1024 * 1024
BATCH_GET_KEYS = 100
BATCH_WRITE_ITEMS = 25
# A transaction stays under DynamoDB's 4 MB with room for the request's own framing.
TRANSACTION_BUDGET = TRANSACTION_BYTES - 256 * 1024

# Tries after the first of a cancelled transaction, of unprocessed batch keys or
# writes, and of a batch planned again (conflict with another writer, throttling).
ATTEMPTS = 8
RETRYABLE = frozenset(
    {
        "TransactionConflict",
        "ThrottlingError",
        "ProvisionedThroughputExceeded",
        "RequestLimitExceeded",
    }
)
CONDITION_FAILED = "ConditionalCheckFailed"

# facts_about asks each entity for as many facts as the caller may still take (up to
# MAX_PAGE) in its first page: its callers take every fact up to their limit (a
# recall's candidate pool), so a hub is read in the same wave as the entities beside it,
# not page after page (a wave more per page). A partition with few facts costs the same
# one Query either way; pages only grow on when a filter leaves a page short. The
# explorer's listing pages start at MIN_PAGE too.
MIN_PAGE = 10
MAX_PAGE = 1000


def backoff(attempt: int) -> None:
    # Not for secrets: retry jitter.
    time.sleep(min(1.0, 0.02 * 2**attempt) * random.random())  # nosec B311


def error_code(error: BaseException) -> str | None:
    """The service's error code of a botocore ClientError (None for anything else)."""
    response = getattr(error, "response", None)
    return response.get("Error", {}).get("Code") if isinstance(response, dict) else None


# -- parallel reads ----------------------------------------------------------------
# The calls of one "wave" (first pages of several entities, BatchGetItem chunks, listing
# shards) go out at once from a thread pool: botocore clients are thread-safe. A task
# that itself fans out runs its sub-calls inline (no pool waits on its own workers).

# Calls in flight at once: a hop's entities (a hub has dozens of neighbours) in one wave.
PARALLEL = 64
_POOL = ThreadPoolExecutor(max_workers=PARALLEL, thread_name_prefix="dynamodb")
_IN_POOL = threading.local()
_T = TypeVar("_T")
_R = TypeVar("_R")
_M = TypeVar("_M")


def _pooled(fn: Callable[[_T], _R], item: _T) -> _R:
    _IN_POOL.active = True
    try:
        return fn(item)
    finally:
        _IN_POOL.active = False


def chunks(items: Iterable[_T], size: int) -> Iterator[list[_T]]:
    """Lists of up to `size` items, read from `items` only as each is wanted."""
    it = iter(items)
    while chunk := list(islice(it, size)):
        yield chunk


def parallel(fn: Callable[[_T], _R], items: Iterable[_T]) -> list[_R]:
    """fn over items, at most PARALLEL at once, results in the order of items."""
    todo = list(items)
    if len(todo) <= 1 or getattr(_IN_POOL, "active", False):
        return [fn(i) for i in todo]
    futures = [_POOL.submit(_pooled, fn, i) for i in todo]
    return [f.result() for f in futures]


def client_config() -> Any:
    """The botocore configuration of the adapter's client."""
    from botocore.config import Config

    return Config(
        connect_timeout=2,
        read_timeout=5,
        retries={"mode": "standard", "max_attempts": 4},
        tcp_keepalive=True,
        # A wave of parallel reads keeps its connections (botocore's default: 10).
        max_pool_connections=2 * PARALLEL,
        # The adapter builds every request itself; DynamoDB checks them all again, so
        # botocore's walk of each request against the model is CPU spent twice.
        parameter_validation=False,
    )


# -- cancelled transactions -----------------------------------------------------------


@dataclass(frozen=True)
class Cancellation:
    """Why DynamoDB cancelled a transaction: one reason code per op ("None" where the
    op was not a cause)."""

    codes: tuple[str | None, ...]

    @property
    def failed_checks(self) -> frozenset[int]:
        """The ops whose condition failed."""
        return frozenset(n for n, code in enumerate(self.codes) if code == CONDITION_FAILED)

    @property
    def others(self) -> frozenset[str]:
        """Every other reason: conflicts, throttling, or an error that stays."""
        return frozenset(c for c in self.codes if c not in (None, "None", CONDITION_FAILED))


@dataclass(frozen=True)
class Verdict:
    """What a cancelled transaction's reasons ask for under a retry rule: give up (the
    caller gets the error), leave members out (`drop`, their positions), send again at
    once with the attempts reset (`at_once`), or after a pause (`wait`)."""

    give_up: bool = False
    drop: frozenset[int] = frozenset()
    at_once: bool = False
    wait: bool = False


def judge(reasons: Cancellation, owners: Mapping[int, int], rule: Retry) -> Verdict:
    """The rule applied to one cancellation. `owners`: op position → member position."""
    failed = frozenset(owners[i] for i in reasons.failed_checks if i in owners)
    if not rule.drop:
        failed = frozenset()
    elif failed and rule.drop_at_once:
        return Verdict(drop=failed, at_once=True)
    # Any other failed condition is the caller's answer, but for DROP_FAILED, which
    # looks only at its members' ops (no other op has a condition).
    if reasons.failed_checks and (not rule.drop or rule.drop_at_once):
        return Verdict(give_up=True)
    others = reasons.others
    if others - rule.reasons or not (failed or others):
        return Verdict(give_up=True)
    return Verdict(drop=failed, wait=bool(others))


def cancellation(error: BaseException) -> Cancellation | None:
    """The reasons of a cancelled transaction; None for any other error."""
    if error_code(error) != "TransactionCanceledException":
        return None
    reasons = getattr(error, "response", {}).get("CancellationReasons") or []
    return Cancellation(tuple(r.get("Code") for r in reasons))


@dataclass(frozen=True)
class Retry:
    """What a caller does when its transaction is cancelled. Reasons in `reasons` send
    it again after a pause (at most `attempts` pauses). With `drop`, a member whose op
    failed its condition is left out and the rest sent again (after a pause only if
    other reasons need one), `drop_at_once`: at once, counting attempts afresh. Any
    other cancellation is raised as DynamoDB answered it, for the caller to read."""

    reasons: frozenset[str] = RETRYABLE
    attempts: int = ATTEMPTS
    drop: bool = False
    drop_at_once: bool = False


# Conflicts and throttling sent again; a failed condition is raised (most writes).
RESEND = Retry()
# A batch of units or marks: one whose condition failed is left out.
DROP_FAILED = Retry(drop=True)
# A merge's page of moved facts: one deleted meanwhile is left out, the rest sent at once.
DROP_FAILED_AT_ONCE = Retry(drop=True, drop_at_once=True)


@dataclass
class Members(Generic[_M]):
    """The parts of one transaction that can be left out: `pack` gives the ops of the
    members it is given and, for each member, which op stands for it (by op index: the
    position of the member in the list given); only those ops carry a condition."""

    members: Sequence[_M]
    pack: Callable[[Sequence[_M]], tuple[list[Item], Mapping[int, int]]] = field(repr=False)


# -- the table -------------------------------------------------------------------------


class TableClient:
    """One table through one botocore client: the I/O every part of the store shares."""

    def __init__(
        self,
        table_name: str,
        client: Any | None = None,
        endpoint_url: str | None = None,
        *,
        consistent_reads: bool = True,
        direct_reads: bool = True,
    ) -> None:
        self.table_name = table_name
        # The recall's reads (facts_about's pages, the names' BatchGetItem, the pending
        # erasures) skip botocore's per-call machinery when answered cleanly
        # (adapters/dynamodb/reads.py); False sends them through the client, whose
        # event hooks then see them (tests that inject faults or count calls there).
        self.direct_reads = direct_reads
        self._direct: DirectReads | None = None
        self.endpoint_url = endpoint_url
        # Strongly consistent reads see every write that returned (as the embedded
        # store does); eventually consistent ones cost half the read units.
        self.consistent_reads = consistent_reads
        self._client = client
        self._own_client = client is None
        if client is not None:
            lift_items(client)
        self._lock = threading.Lock()

    @property
    def client(self) -> Any:
        """The botocore DynamoDB client, built on first use and then reused."""
        if self._client is None:
            with self._lock:
                if self._client is None:
                    self._client = self._make_client()
        return self._client

    def _make_client(self) -> Any:
        import boto3

        session = boto3.session.Session()
        client = session.client("dynamodb", endpoint_url=self.endpoint_url, config=client_config())
        lift_items(client)
        return client

    def close(self) -> None:
        if self._direct is not None:
            self._direct.close()
            self._direct = None
        if self._own_client and self._client is not None:
            self._client.close()
            self._client = None

    # -- reads ---------------------------------------------------------------------

    def _read(self, operation: str, params: dict[str, Any], direct: bool = True) -> dict[str, Any]:
        """One Query or BatchGetItem: sent directly when it is one of the recall's reads
        (`direct`) and the store allows it, else through the client."""
        if direct and self.direct_reads:
            if self._direct is None:
                client = self.client
                with self._lock:
                    if self._direct is None:
                        self._direct = DirectReads.of(client, client.meta.config)
            if self._direct is not None:
                return self._direct.call(operation, params)
        return through_client(self.client, operation, params)

    def _get(self, key: Item, projection: str | None = None) -> Item | None:
        params: dict[str, Any] = {
            "TableName": self.table_name,
            "Key": key,
            "ConsistentRead": self.consistent_reads,
            "ReturnConsumedCapacity": "TOTAL",
        }
        if projection:
            params["ProjectionExpression"] = projection
        return self.client.get_item(**params).get("Item")

    def _batch_get(
        self, keys: Sequence[Item], projection: str | None = None, *, direct: bool = False
    ) -> list[Item]:
        """Items of these keys (missing ones left out): 100 keys per BatchGetItem, the
        calls in parallel (one wave however many names a question has). `direct`: one
        of the recall's reads (see _read)."""
        groups = [keys[n : n + BATCH_GET_KEYS] for n in range(0, len(keys), BATCH_GET_KEYS)]
        found = parallel(lambda group: self._batch_get_chunk(group, projection, direct), groups)
        return [i for items in found for i in items]

    def _batch_get_chunk(
        self, keys: Sequence[Item], projection: str | None, direct: bool = False
    ) -> list[Item]:
        request: dict[str, Any] = {"Keys": list(keys), "ConsistentRead": self.consistent_reads}
        if projection:
            request["ProjectionExpression"] = projection
        found: list[Item] = []
        attempt = 0
        while request["Keys"]:
            params = {
                "RequestItems": {self.table_name: request},
                "ReturnConsumedCapacity": "TOTAL",
            }
            reply = self._read("BatchGetItem", params, direct)
            found += reply.get("Responses", {}).get(self.table_name, [])
            left = reply.get("UnprocessedKeys", {}).get(self.table_name)
            if not left:
                break
            if attempt >= ATTEMPTS:
                raise RuntimeError("DynamoDB left keys unprocessed after every retry")
            request = left
            backoff(attempt)
            attempt += 1
        return found

    def _query(self, *, direct: bool = False, **params: Any) -> Iterator[Item]:
        """Every item of a Query, page by page, read only as far as the caller goes.
        `direct`: one of the recall's reads (see _read)."""
        params = {
            "TableName": self.table_name,
            "ConsistentRead": self.consistent_reads,
            "ReturnConsumedCapacity": "TOTAL",
            **params,
        }
        while True:
            reply = self._read("Query", params, direct)
            yield from reply.get("Items", [])
            last = reply.get("LastEvaluatedKey")
            if not last:
                return
            params["ExclusiveStartKey"] = last

    # -- writes --------------------------------------------------------------------

    def _batch_write(self, requests: Sequence[Item], *, ordered: bool = True) -> None:
        """PutRequest/DeleteRequest items, 25 per BatchWriteItem, unprocessed retried.
        In order unless `ordered` is False: then the calls go out in parallel."""
        groups = [
            list(requests[n : n + BATCH_WRITE_ITEMS])
            for n in range(0, len(requests), BATCH_WRITE_ITEMS)
        ]
        if ordered:
            for group in groups:
                self._batch_write_chunk(group)
        else:
            parallel(self._batch_write_chunk, groups)

    def _batch_write_chunk(self, pending: list[Item]) -> None:
        attempt = 0
        while pending:
            reply = self.client.batch_write_item(RequestItems={self.table_name: pending})
            pending = reply.get("UnprocessedItems", {}).get(self.table_name, [])
            if pending:
                if attempt >= ATTEMPTS:
                    raise RuntimeError("DynamoDB left writes unprocessed after every retry")
                backoff(attempt)
                attempt += 1

    def _transact(
        self,
        ops: Sequence[Item] | Members[_M],
        rule: Retry = RESEND,
        *,
        consumed: bool = True,
    ) -> list[_M]:
        """One TransactWriteItems, sent again as `rule` says when it is cancelled.
        `ops`: the ops, or Members whose failed ops may be left out (`rule.drop`).
        Returns the members written (all of them, or those left in); raises what
        DynamoDB answered when the rule gives up. `consumed`: ask for the capacity."""
        given: Members[Any] = (
            ops if isinstance(ops, Members) else Members([None], lambda _: (list(ops), {}))
        )
        members = list(given.members)
        extra = {"ReturnConsumedCapacity": "TOTAL"} if consumed else {}
        packed: tuple[list[Item], Mapping[int, int]] | None = None
        attempt = 0
        while members:
            if packed is None:
                packed = given.pack(members)
            batch, owners = packed
            try:
                self.client.transact_write_items(TransactItems=batch, **extra)
                return members
            except Exception as error:
                reasons = cancellation(error)
                if reasons is None:
                    raise
                verdict = judge(reasons, owners, rule)
                if verdict.give_up or (verdict.wait and attempt >= rule.attempts):
                    raise
                if verdict.drop:
                    members = [m for n, m in enumerate(members) if n not in verdict.drop]
                    packed = None
                if verdict.at_once:
                    attempt = 0
                elif verdict.wait:
                    backoff(attempt)
                    attempt += 1
        return []
