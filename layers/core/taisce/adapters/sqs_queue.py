"""The work queue on AWS: one SQS FIFO queue, one message group per project.

A FIFO group delivers a project's work messages one at a time, so two workers never
rebuild the same project's reports at once (their writes could interleave), while
different projects are worked on in parallel. The client is built on first use.
"""

from __future__ import annotations

import hashlib
import json
import threading
import uuid
from collections.abc import Sequence
from typing import Any

from ..domain.model import WorkKind


class SqsWorkQueue:
    def __init__(
        self, queue_url: str, client: Any | None = None, endpoint_url: str | None = None
    ) -> None:
        self.queue_url = queue_url
        self.endpoint_url = endpoint_url
        self._client = client
        self._lock = threading.Lock()

    @property
    def client(self) -> Any:
        if self._client is None:
            with self._lock:
                if self._client is None:
                    import boto3
                    from botocore.config import Config

                    config = Config(connect_timeout=2, read_timeout=5, retries={"mode": "standard"})
                    self._client = boto3.session.Session().client(
                        "sqs", endpoint_url=self.endpoint_url, config=config
                    )
        return self._client

    def send(self, project: str, kind: WorkKind, ids: Sequence[str]) -> None:
        body = json.dumps({"project": project, "kind": kind, "ids": list(ids)}, sort_keys=True)
        self.client.send_message(
            QueueUrl=self.queue_url,
            MessageBody=body,
            MessageGroupId=group_id(project),
            # Every send is a message of its own: SQS's content deduplication would drop
            # a second write of the same ids within 5 minutes (a delete, then a store
            # again), and a duplicate message costs only a pass that finds no work.
            MessageDeduplicationId=uuid.uuid4().hex,
        )


def group_id(project: str) -> str:
    """The project's message group (a hash: group ids allow 128 characters of a set)."""
    return hashlib.sha256(project.encode("utf-8")).hexdigest()
