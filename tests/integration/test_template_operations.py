"""What running the stack needs, read from template.yaml as SAM's translator turns it
into CloudFormation (tests/sam_translate.py): each function's log group with a
retention, the API's access log, the alarms and where they go, and the OpenSearch
collection's policies kept with the collection they serve."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from taisce.api import observe
from tests import sam_translate
from tests.cfn_eval import Stack
from tests.integration.test_deploy_readiness import _data_access, functions, translated

pytestmark = pytest.mark.skipif(
    not sam_translate.available(),
    reason="SAM's translator lives in .venv-sam: run `make sam-install` (make test does)",
)


def _of_type(kind: str, s: Stack) -> dict[str, dict[str, Any]]:
    return {
        logical: r
        for logical, r in translated()["Resources"].items()
        if r["Type"] == kind and s.exists(logical)
    }


def test_every_function_logs_to_its_own_group_with_the_retention_asked() -> None:
    s = Stack(translated(), {"LogRetentionDays": "7"})
    groups = {
        s.resolve(r["Properties"]["LogGroupName"]): s.resolve(r["Properties"])
        for r in _of_type("AWS::Logs::LogGroup", s).values()
        if "LogGroupName" in r["Properties"]
    }
    for function in functions():
        name = f"/aws/lambda/{s.physical(function)}"
        assert name in groups, f"{function} has no log group of the stack's"
        assert groups[name]["RetentionInDays"] == "7", function
    default = translated()["Parameters"]["LogRetentionDays"]["Default"]
    assert default == 30


def test_the_api_writes_an_access_log_without_credentials_or_bodies() -> None:
    s = Stack(translated(), {"LogRetentionDays": "14"})
    (stage,) = _of_type("AWS::ApiGatewayV2::Stage", s).values()
    settings = stage["Properties"]["AccessLogSettings"]
    destination = settings["DestinationArn"]["Fn::GetAtt"][0]
    group = translated()["Resources"][destination]
    assert group["Type"] == "AWS::Logs::LogGroup"
    assert s.resolve(group["Properties"]["RetentionInDays"]) == "14"
    fields = json.loads(settings["Format"])
    for wanted in ("requestId", "routeKey", "status", "integrationError", "authorizerError"):
        assert wanted in fields, wanted
    variables = " ".join(fields.values())
    for secret in ("header", "querystring", "body"):
        assert secret not in variables.lower()


def _alarms(s: Stack) -> list[dict[str, Any]]:
    return [s.resolve(r["Properties"]) for r in _of_type("AWS::CloudWatch::Alarm", s).values()]


def _watching(s: Stack, namespace: str, metric: str, dimension: str, value: str) -> list[Any]:
    """Alarms raised by any one occurrence of the metric (a sum or maximum above 0)."""
    return [
        a
        for a in _alarms(s)
        if a["Namespace"] == namespace
        and a["MetricName"] == metric
        and {"Name": dimension, "Value": value} in a["Dimensions"]
        and a["Threshold"] == 0
        and a["ComparisonOperator"] == "GreaterThanThreshold"
    ]


def test_alarms_watch_the_dead_letters_each_functions_errors_and_throttles_5xx_and_the_table() -> (
    None
):
    s = Stack(translated())
    dead_letters = s.attribute("WorkDeadLetterQueue", "QueueName")
    assert _watching(s, "AWS/SQS", "ApproximateNumberOfMessagesVisible", "QueueName", dead_letters)
    for function in functions():
        for metric in ("Errors", "Throttles"):
            found = _watching(s, "AWS/Lambda", metric, "FunctionName", s.physical(function))
            assert found, f"no {metric} alarm for {function}"
    assert _watching(s, "AWS/ApiGateway", "5xx", "ApiId", s.physical("Api"))
    for metric in ("ReadThrottleEvents", "WriteThrottleEvents"):
        assert _watching(s, "AWS/DynamoDB", metric, "TableName", s.physical("Table"))
    # Every alarm notifies the topic; quiet periods are not alarms.
    topic = s.physical("AlarmTopic")
    for alarm in _alarms(s):
        assert alarm["AlarmActions"] == [topic], alarm["AlarmDescription"]
        assert alarm["TreatMissingData"] == "notBreaching"


def test_an_erasure_pending_for_two_hours_raises_an_alarm() -> None:
    """The worker's own metric (api/observe.py, EMF), in the namespace and with the
    service dimension the functions' environment gives Powertools."""
    s = Stack(translated())
    worker = translated()["Resources"]["WorkerFunction"]["Properties"]
    variables = s.resolve(worker["Environment"]["Variables"])
    namespace = variables["POWERTOOLS_METRICS_NAMESPACE"]
    service = variables["POWERTOOLS_SERVICE_NAME"]
    assert (namespace, service) == (observe.NAMESPACE, observe.SERVICE)
    (alarm,) = _watching(s, namespace, observe.ERASURES_PENDING, "service", service)
    # Pending in every sweep of 2 hours: the least of each 5 minutes above 0, 24 times.
    assert alarm["Statistic"] == "Minimum" and int(alarm["Period"]) == 300
    assert int(alarm["EvaluationPeriods"]) == int(alarm["DatapointsToAlarm"]) == 24


@pytest.mark.parametrize("email", ["", "ops@example.com"])
def test_the_alarm_email_is_subscribed_only_when_given(email: str) -> None:
    s = Stack(translated(), {"AlarmEmail": email})
    pattern = translated()["Parameters"]["AlarmEmail"]["AllowedPattern"]
    assert re.fullmatch(pattern, email)
    subscriptions = [
        s.resolve(r["Properties"]) for r in _of_type("AWS::SNS::Subscription", s).values()
    ]
    wanted = [{"TopicArn": "AlarmTopic", "Protocol": "email", "Endpoint": email}]
    assert subscriptions == (wanted if email else [])


def test_the_vector_collections_policies_are_kept_with_it() -> None:
    """A kept collection still bills; its encryption, network and data-access policies
    are what make it reachable (and deletable by hand) after the stack is gone."""
    resources = translated()["Resources"]
    collection = resources["VectorCollection"]
    policies = {
        logical: r
        for logical, r in resources.items()
        if r["Type"].startswith("AWS::OpenSearchServerless::") and logical != "VectorCollection"
    }
    assert set(policies) == {"VectorEncryptionPolicy", "VectorNetworkPolicy", "VectorAccessPolicy"}
    for logical, policy in policies.items():
        for key in ("DeletionPolicy", "UpdateReplacePolicy"):
            assert policy.get(key) == collection[key] == "Retain", (logical, key)


OPERATOR = "arn:aws:iam::123456789012:role/taisce-operator"


@pytest.mark.parametrize("operator", ["", OPERATOR])
def test_an_operator_given_is_granted_the_workers_rights_on_the_collection(operator: str) -> None:
    """`taisce reindex` does the worker's vector work from an operator's machine: the
    principal named gets exactly the worker's data-access rights, and nothing is
    added when none is named."""
    pattern = translated()["Parameters"]["VectorOperatorPrincipal"]["AllowedPattern"]
    assert re.fullmatch(pattern, operator)
    s = Stack(translated(), {"Embeddings": "bedrock", "VectorOperatorPrincipal": operator})
    granted = _data_access(s)
    roles = {s.attribute(s.role_of(f), "Arn") for f in functions()}
    worker = s.attribute(s.role_of("WorkerFunction"), "Arn")
    if operator:
        assert granted[operator] == granted[worker]
        assert {"aoss:WriteDocument", "aoss:CreateIndex"} <= granted[operator]
    assert set(granted) - roles == ({operator} if operator else set())


@pytest.mark.parametrize("wrong", ["taisce-operator", "arn:aws:iam::123:role/x", '","*'])
def test_the_operator_must_be_an_iam_role_or_user_arn(wrong: str) -> None:
    pattern = translated()["Parameters"]["VectorOperatorPrincipal"]["AllowedPattern"]
    assert not re.fullmatch(pattern, wrong)
