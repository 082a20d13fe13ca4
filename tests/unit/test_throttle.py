"""The refused-credential bucket, on a clock the test moves."""

from __future__ import annotations

from taisce.local.throttle import CredentialThrottle, retry_after


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_refusals_spend_tokens_that_refill_over_time() -> None:
    clock = Clock()
    throttle = CredentialThrottle(3, 6.0, clock)
    for _ in range(3):
        assert throttle.take("1.2.3.4", "Bearer bad") is None
        throttle.settle("1.2.3.4", "Bearer bad", 401)
    wait = throttle.take("1.2.3.4", "Bearer bad")
    assert wait == 6.0 and retry_after(wait) == "6"
    assert throttle.take("5.6.7.8", "Bearer bad") is None  # another address: its own bucket
    clock.now = 3.0
    assert retry_after(throttle.take("1.2.3.4", "Bearer other") or 0) == "3"
    clock.now = 6.0
    assert throttle.take("1.2.3.4", "Bearer bad") is None  # one token back


def test_an_accepted_credential_gives_its_token_back_and_is_never_throttled() -> None:
    clock = Clock()
    throttle = CredentialThrottle(2, 60.0, clock)
    assert throttle.take("a", "Bearer good") is None
    throttle.settle("a", "Bearer good", 200)
    for _ in range(2):
        assert throttle.take("a", "Bearer bad") is None
        throttle.settle("a", "Bearer bad", 401)
    assert throttle.take("a", "Bearer bad") is not None
    assert throttle.take("a", "Bearer good") is None
    # A server failure gives the token back but vouches for nothing.
    clock.now = 60.0
    assert throttle.take("a", "Bearer new") is None
    throttle.settle("a", "Bearer new", 500)
    assert throttle.take("a", "Bearer new") is None


def test_zero_turns_it_off() -> None:
    assert CredentialThrottle.per_minute(0) is None
    made = CredentialThrottle.per_minute(10)
    assert made is not None and made.refill_seconds == 6.0
