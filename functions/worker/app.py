"""The worker: batches from the SQS FIFO work queue, and a schedule that sweeps.

SQS records: each is one work message (project, kind, ids); a record that fails is
reported back as a batch item failure (SQS retries it after its visibility timeout
and, after maxReceiveCount, moves it to the dead-letter queue), and the records after
it in the same project's message group are failed too, so a project's work keeps its
order. Each record is processed once per SQS message id (Powertools idempotency,
records in the memory table): a message delivered twice does its pass once.

Scheduled event (no "Records"): queue a pass for every project with marks that no
message announced (a send that failed after a write, a message dead-lettered).

Time: a pass starts an extraction only while the invocation has time left for the
worst case of one (service/work.py, `TimeAllowance`); what it could not start keeps its marks and
a pass is queued to go on. So no pass is cut off by the function's timeout, whatever
the batch holds.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from typing import Any

from aws_lambda_powertools.utilities.batch import (
    SqsFifoPartialProcessor,
    process_partial_response,
)
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord
from aws_lambda_powertools.utilities.idempotency import (
    DynamoDBPersistenceLayer,
    IdempotencyConfig,
    idempotent_function,
)

from taisce.api import services
from taisce.api.logs import logger
from taisce.api.observe import count_erasures_pending, count_worker_lag, observed
from taisce.api.wiring import extraction_worst_case
from taisce.service.work import TimeAllowance, WorkMessage, erasures_pending, sweep, work_on
from taisce.settings import SettingsError

# Idempotency records live in the memory table under one partition of their own
# (docs/dynamodb.md, "Idempotency records"); DynamoDB's TTL removes them.
IDEMPOTENCY_PK = "IDEMPOTENCY#worker"
# Longer than a message can stay in flight: the queue's visibility timeout (3,600 s)
# x maxReceiveCount (2) = 2 h (tests/integration/test_deploy_readiness.py checks it).
IDEMPOTENCY_SECONDS = 8 * 60 * 60

processor = SqsFifoPartialProcessor(skip_group_on_error=True)
idempotency = IdempotencyConfig(
    event_key_jmespath="messageId",
    raise_on_no_idempotency_key=True,
    expires_after_seconds=IDEMPOTENCY_SECONDS,
)


@functools.cache
def _ready() -> None:
    """Settle what the wiring says the worker needs (the vector index) on its first
    pass; a failure is retried on the next record."""
    services().prepare_worker()


# The invocation's Lambda context, for its remaining time (None outside Lambda).
_invocation: dict[str, Any] = {"context": None}


def allowance() -> TimeAllowance | None:
    """This invocation's time, against one extraction's worst case (settings)."""
    context = _invocation["context"]
    remaining = getattr(context, "get_remaining_time_in_millis", None)
    if remaining is None:
        return None
    return TimeAllowance(lambda: remaining() / 1000, extraction_worst_case(services().settings))


def _pass(record: dict[str, Any]) -> dict[str, int]:
    work = WorkMessage.model_validate_json(record["body"])
    _ready()
    return work_on(services().memory, work, allowance(), services().queue)


@functools.cache
def _once() -> Callable[..., dict[str, int]]:
    """`_pass`, done once per SQS message id. Built on first use: no client at import."""
    built = services()
    if built.table_client is None:
        raise SettingsError("invalid setting: TAISCE_STORE must be dynamodb for the worker")
    persistence = DynamoDBPersistenceLayer(
        table_name=built.settings.dynamodb_table,
        key_attr="PK",
        sort_key_attr="SK",
        static_pk_value=IDEMPOTENCY_PK,
        boto3_client=built.table_client(),
    )
    return idempotent_function(
        _pass, data_keyword_argument="record", persistence_store=persistence, config=idempotency
    )


def waited(record: SQSRecord, now: float) -> float | None:
    """Seconds between the message's sending and now (None if SQS gave no time)."""
    sent = record.raw_event.get("attributes", {}).get("SentTimestamp")
    return max(0.0, now - int(sent) / 1000) if str(sent or "").isdigit() else None


def record_handler(record: SQSRecord) -> dict[str, int]:
    # The message id is the record's correlation id: a dead-lettered message's log
    # lines are found by the id the dead-letter queue shows.
    logger.set_correlation_id(record.message_id)
    lag = waited(record, time.time())
    if lag is not None:
        count_worker_lag(lag)
    done = _once()(record=record.raw_event)
    logger.info("pass done", extra={"done": done, "waited_seconds": lag})
    return done


def _sweep() -> dict[str, Any]:
    queue = services().queue
    if queue is None:
        raise SettingsError("invalid setting: TAISCE_WORK_QUEUE_URL is needed to sweep")
    swept = sweep(services().memory, queue)
    pending = erasures_pending(services().memory)
    count_erasures_pending(pending)
    logger.info("swept", extra={"projects": swept, "erasures_pending": pending})
    return {"projects": swept}


@functools.partial(observed, correlated=False)
def lambda_handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    if "Records" not in event:
        return _sweep()
    _invocation["context"] = context
    if context is not None:
        idempotency.register_lambda_context(context)
    return process_partial_response(
        event=event, record_handler=record_handler, processor=processor, context=context
    )
