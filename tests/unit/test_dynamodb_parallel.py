"""The DynamoDB adapter's waves (adapters/dynamodb/client.parallel): results in the order
given, calls of one wave in flight together, a task's own fan-out run inline (a pool
never waits on its own workers), and a failure raised to the caller."""

from __future__ import annotations

import threading
import time

import pytest

from taisce.adapters.dynamodb.client import PARALLEL, parallel


def test_results_keep_the_order_of_the_items() -> None:
    assert parallel(lambda n: n * n, range(100)) == [n * n for n in range(100)]
    assert parallel(lambda n: n, []) == []


def test_the_calls_of_a_wave_are_in_flight_together() -> None:
    active = 0
    most = 0
    lock = threading.Lock()

    def call(_: int) -> None:
        nonlocal active, most
        with lock:
            active += 1
            most = max(most, active)
        time.sleep(0.3)  # long enough for every thread to start on a loaded machine
        with lock:
            active -= 1

    parallel(call, range(8))
    assert most == 8  # all at once, not one after another
    assert PARALLEL >= 64


def test_a_task_that_fans_out_runs_its_calls_inline() -> None:
    def outer(n: int) -> list[int]:
        return parallel(lambda m: n * 10 + m, range(3))

    assert parallel(outer, range(PARALLEL * 2)) == [
        [n * 10, n * 10 + 1, n * 10 + 2] for n in range(PARALLEL * 2)
    ]


def test_a_failure_reaches_the_caller() -> None:
    def call(n: int) -> int:
        if n == 3:
            raise ValueError("call 3 failed")
        return n

    with pytest.raises(ValueError, match="call 3"):
        parallel(call, range(6))
