"""DynamoDB's reports at the size components reach: a report's entity keys past the
400 KB item limit are split over chunk items, and replacing reports writes the new
items before it deletes the old, so a failure part-way leaves the old reports readable.
On moto's server over HTTP (moto enforces the 400 KB item limit as DynamoDB does)."""

from __future__ import annotations

from typing import Any

import pytest

from taisce.adapters.dynamodb.codec import ITEM_BYTES
from taisce.adapters.dynamodb.store import DynamoDbStore
from taisce.domain.model import Report
from taisce.domain.reports import report_id
from tests.contract.factories import unique
from tests.moto_server import MotoDynamoDb

# 6,000 keys of ~100 characters: ~620 KB of JSON, half again DynamoDB's item limit
# (as 20,000 short names would be), with few pointer items to write.
BIG = 6_000
PAD = "with a long descriptive name " * 3


def _report(keys: list[str], level: int, title: str, parent: str | None = None) -> Report:
    return Report(
        id=report_id("user", level, keys),
        role="user",
        level=level,
        parent_id=parent,
        title=title,
        summary=f"{title}: {len(keys)} entities",
        path=(title,),
        source_messages=("m1",),
        entity_keys=tuple(sorted(keys)),
        component=min(keys),
    )


def _component(prefix: str, n: int) -> list[Report]:
    keys = [f"{prefix} entity number {i:06d} {PAD}".strip() for i in range(n)]
    top = _report(keys, 1, f"{prefix} all")
    return [top, _report(keys[:3], 0, f"{prefix} first three", top.id)]


class FailWrites:
    """Fails the Nth BatchWriteItem of a client (as botocore raises a 500)."""

    def __init__(self, client: Any) -> None:
        self.calls = 0
        self.fail_at: int | None = None
        client.meta.events.register("before-call.dynamodb.BatchWriteItem", self._before)

    def _before(self, **_: Any) -> Any:
        self.calls += 1
        if self.calls != self.fail_at:
            return None
        error = {"Error": {"Code": "InternalServerError", "Message": "injected by the test"}}
        return type("Http", (), {"status_code": 500, "headers": {}})(), error


def test_a_component_past_the_item_limit_is_stored_and_read_whole(
    dynamo: DynamoDbStore,
) -> None:
    project = unique("bigreport")
    reports = _component("a", BIG)
    assert len(str(reports[0].entity_keys)) > ITEM_BYTES
    assert dynamo.replace_reports(project, "user", set(), reports) == []
    assert dynamo.reports_by_ids(project, [r.id for r in reports]) == reports
    component = reports[0].component
    last = reports[0].entity_keys[-1]
    assert dynamo.report_components(project, "user", {last}) == {component}
    # Replaced by a smaller component: every old item goes, chunks included.
    smaller = _component("a", 10)
    dropped = dynamo.replace_reports(project, "user", {component}, smaller)
    assert set(dropped) == {reports[0].id}
    assert dynamo.reports_by_ids(project, [r.id for r in smaller]) == smaller
    assert dynamo.reports_by_ids(project, [reports[0].id]) == []
    assert dynamo.report_components(project, "user", {last}) == set()
    assert dynamo.replace_reports(project, "user", {component}, []) == [r.id for r in smaller]
    left = dynamo.client.query(
        TableName=dynamo.table_name,
        KeyConditionExpression="PK = :pk",
        ExpressionAttributeValues={":pk": {"S": f"P#{project}#R#{reports[0].id}"}},
    )
    assert left["Items"] == []


@pytest.mark.parametrize("fail_at", [1, 2, 3, 40])
def test_a_replacement_failing_part_way_leaves_reports_readable(
    moto: MotoDynamoDb, fail_at: int
) -> None:
    """The first write puts every new listing, report and member copy; deletes follow.
    Failing that write leaves the old reports whole; failing later leaves the new ones
    whole. Either way an entity keeps its reports, and the next pass finishes."""
    store = DynamoDbStore(moto.table, client=moto.client())
    project = unique("replacefail")
    old = _component("b", 800)
    store.replace_reports(project, "user", set(), old)
    member = old[1].entity_keys[0]
    component = old[0].component
    faults = FailWrites(store.client)
    faults.fail_at = fail_at
    new = _component("b", 1_000)
    with pytest.raises(Exception, match="injected"):
        store.replace_reports(project, "user", {component}, new)
    faults.fail_at = None
    if fail_at == 1:
        assert store.reports_by_ids(project, [r.id for r in old]) == old
    else:
        assert store.reports_by_ids(project, [r.id for r in new]) == new
    assert [r.id for r in store.reports_of_entity(project, member, ["user"])] == [old[1].id]
    # The next pass finds the component through the pointers and finishes the job.
    stale = store.report_components(project, "user", {member})
    assert stale == {component}
    store.replace_reports(project, "user", stale, new)
    assert store.reports_by_ids(project, [r.id for r in new]) == new
    assert store.reports_by_ids(project, [old[0].id]) == []
    store.client.close()
