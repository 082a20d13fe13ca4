"""Refused credentials, throttled per client address on `taisce serve`.

Each address has a bucket of N tokens (`--refused-credentials`, default 10) that
refills at one token every 60/N seconds. A request with a credential takes a token
before the authorizer runs and gets it back unless the credential is refused; with no
token left, the request is answered `429 rate_limited` with `Retry-After` and the
credential is not checked, so a guess gets no answer either way. Taking the token
first bounds guesses sent in parallel too. A credential accepted before (the server
keeps a hash of it, in memory) is never throttled: a client that knows its credential
is not held up by someone guessing from the same address (a proxy, a shared host).

On AWS API Gateway's route throttling stands in for this (docs/reliability.md).
"""

from __future__ import annotations

import hashlib
import math
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

# The default (`taisce serve --refused-credentials`): ten at once, then one every 6 s.
REFUSED_PER_MINUTE = 10
# Addresses and accepted credentials remembered at most (the oldest are forgotten).
MAX_ADDRESSES = 10_000
MAX_ACCEPTED = 10_000


@dataclass
class _Bucket:
    tokens: float
    at: float


class CredentialThrottle:
    def __init__(
        self,
        failures: int,
        refill_seconds: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.failures = failures
        self.refill_seconds = refill_seconds
        self.clock = clock
        self._buckets: OrderedDict[str, _Bucket] = OrderedDict()
        self._accepted: OrderedDict[str, None] = OrderedDict()

    @classmethod
    def per_minute(cls, refused: int) -> CredentialThrottle | None:
        """N refused credentials a minute per address; None (no limit) for 0."""
        return cls(refused, 60.0 / refused) if refused else None

    @staticmethod
    def _digest(authorization: str) -> str:
        return hashlib.sha256(authorization.encode("utf-8", "surrogatepass")).hexdigest()

    def _bucket(self, address: str) -> _Bucket:
        now = self.clock()
        bucket = self._buckets.get(address)
        if bucket is None:
            bucket = _Bucket(float(self.failures), now)
            self._buckets[address] = bucket
            while len(self._buckets) > MAX_ADDRESSES:
                self._buckets.popitem(last=False)
        else:
            refilled = bucket.tokens + (now - bucket.at) / self.refill_seconds
            bucket.tokens, bucket.at = min(float(self.failures), refilled), now
            self._buckets.move_to_end(address)
        return bucket

    def take(self, address: str, authorization: str) -> float | None:
        """Before the credential is checked: None to go on (a token taken unless the
        credential was accepted before), or the seconds to wait (no token left)."""
        if self._digest(authorization) in self._accepted:
            return None
        bucket = self._bucket(address)
        if bucket.tokens < 1:
            return (1 - bucket.tokens) * self.refill_seconds
        bucket.tokens -= 1
        return None

    def settle(self, address: str, authorization: str, status: int) -> None:
        """After the request: a refused credential (401) keeps its token spent; an
        accepted one gives it back and is remembered; a server failure (5xx) gives it
        back without vouching for the credential."""
        digest = self._digest(authorization)
        if status == 401:
            self._accepted.pop(digest, None)
            return
        if digest not in self._accepted:
            bucket = self._bucket(address)
            bucket.tokens = min(float(self.failures), bucket.tokens + 1)
        if status >= 500:
            return
        self._accepted[digest] = None
        self._accepted.move_to_end(digest)
        while len(self._accepted) > MAX_ACCEPTED:
            self._accepted.popitem(last=False)


def retry_after(seconds: float) -> str:
    """Whole seconds, rounded up, as `Retry-After` takes them."""
    return str(max(1, math.ceil(seconds)))
