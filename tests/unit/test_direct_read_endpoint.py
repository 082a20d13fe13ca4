"""The recall's direct reads (adapters/dynamodb/reads.py) go to the host botocore's own
client sends the same Query to, whatever decides it: FIPS (in GovCloud, the regular
endpoint), dual-stack, or an endpoint_url. The client's URL is taken from the request
it is about to send (a before-send hook stops it there: nothing leaves the machine)."""

from __future__ import annotations

from typing import Any

import boto3
import pytest
from botocore.config import Config

from taisce.adapters.dynamodb.reads import DirectReads


class Stop(Exception):
    pass


def client_sends_to(client: Any) -> str:
    return client_request(client)["url"]


def client_request(client: Any) -> dict[str, str]:
    """The URL of the Query the client is about to send, and the region and service
    of its signature's scope (`Credential=<key>/<date>/<region>/<service>/aws4_request`)."""
    seen: dict[str, str] = {}

    def stop(request: Any, **_: Any) -> None:
        seen["url"] = request.url
        scope = str(request.headers["Authorization"]).split("Credential=", 1)[1]
        seen["region"], seen["service"] = scope.split("/")[2:4]
        raise Stop

    client.meta.events.register("before-send.dynamodb.Query", stop)
    with pytest.raises(Stop):
        client.query(
            TableName="taisce",
            KeyConditionExpression="PK = :p",
            ExpressionAttributeValues={":p": {"S": "P#demo"}},
        )
    return seen


@pytest.mark.parametrize(
    ("region", "options"),
    [
        ("us-gov-west-1", {"use_fips_endpoint": True}),
        ("us-gov-west-1", {}),
        ("us-east-1", {"use_fips_endpoint": True}),
        ("eu-west-1", {"use_dualstack_endpoint": True}),
        ("eu-west-1", {}),
    ],
)
def test_direct_reads_go_where_the_client_sends(region: str, options: dict[str, bool]) -> None:
    session = boto3.session.Session(
        aws_access_key_id="AKIDEXAMPLE", aws_secret_access_key="secret", region_name=region
    )
    client = session.client("dynamodb", config=Config(**options))
    reads = DirectReads.of(client, client.meta.config)
    assert reads is not None
    sent = client_request(client)
    assert reads.url.rstrip("/") == sent["url"].rstrip("/")
    # and signed for the region and service the client signs its own Query for.
    assert (reads.region, "dynamodb") == (sent["region"], sent["service"])
    reads.close()


def test_an_endpoint_url_is_kept() -> None:
    session = boto3.session.Session(
        aws_access_key_id="AKIDEXAMPLE", aws_secret_access_key="secret", region_name="eu-west-1"
    )
    client = session.client("dynamodb", endpoint_url="http://127.0.0.1:8000")
    reads = DirectReads.of(client, client.meta.config)
    assert reads is not None
    assert reads.url == "http://127.0.0.1:8000/" == client_sends_to(client)
    reads.close()
