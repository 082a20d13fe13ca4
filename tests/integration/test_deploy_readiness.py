"""What a deploy needs, read from template.yaml as SAM's own translator turns it into
CloudFormation (tests/sam_translate.py), for the parameter sets a deploy uses.

Each function's role is checked against the calls its code makes:

- DynamoDB and SQS: recorded, not listed by hand. Every event of events/ runs through
  its handler against moto's server (tests/function_events.py) with botocore's calls
  recorded (tests/aws_calls.py), and each recorded call (transactions as their items'
  actions, with the partition key for dynamodb:LeadingKeys) must be allowed on the
  table or queue the template makes.
- Bedrock's embedding model and OpenSearch Serverless: recorded the same way, over the
  same events run as a Bedrock deploy with a collection whose data planes are answered
  by tests/vector_fakes.py; each function's recorded aoss permissions must be allowed
  by its role (aoss:APIAccessAll) and granted to it by the collection's data-access
  policy, and no other function may have either. The extraction model cannot be
  answered here: who extracts is declared below. Model and inference-profile ARNs are
  built as Bedrock does.

Also: API Gateway's permission to invoke the authorizer, OpenSearch policy names
within 32 characters for the longest collection name the parameter admits, timeouts
within API Gateway's 30 s for routes, and the worker's timeout, queue visibility and
idempotency window consistent with each other.
"""

from __future__ import annotations

import functools
import inspect
import json
import re
from typing import Any

import pytest

from functions.worker import app as worker
from taisce.adapters.dynamodb.store import DynamoDbStore
from taisce.adapters.extractors import BEDROCK_CALL_ATTEMPTS
from taisce.service.memory import EXTRACTION_RETRY_WAIT
from taisce.service.work import FINISH_SECONDS, extraction_seconds
from taisce.settings import Settings
from tests import sam_translate
from tests.cfn_eval import ACCOUNT, PARTITION, REGION, Stack
from tests.function_events import deleted_fact_id, run_events
from tests.moto_server import TEMPLATE

pytestmark = pytest.mark.skipif(
    not sam_translate.available(),
    reason="SAM's translator lives in .venv-sam: run `make sam-install` (make test does)",
)

# API Gateway's longest wait for an integration (HTTP API): 30 s.
API_TIMEOUT = 30
# Parameter sets a deploy uses: the default (no vectors, no extraction), Bedrock for
# both with a model id, with an inference profile id, and the local model.
PROFILE = "us.anthropic.claude-3-5-haiku-20241022-v1:0"
SCENARIOS = {
    "default": {},
    "bedrock": {"Embeddings": "bedrock", "Extractor": "bedrock"},
    "profile": {"Embeddings": "bedrock", "Extractor": "bedrock", "ExtractorModelId": PROFILE},
    "local": {"Embeddings": "local", "Extractor": "bedrock"},
}
# Who calls what the tests cannot run (from the code): the extractor only by the
# worker. Embedding and vector calls are recorded (run_events(vectors=True)).
EXTRACTS = {"WorkerFunction"}


@functools.cache
def translated() -> dict[str, Any]:
    return sam_translate.translate(TEMPLATE)


def stack(scenario: str = "default") -> Stack:
    return Stack(translated(), SCENARIOS[scenario])


def functions() -> list[str]:
    return sorted(
        k for k, v in translated()["Resources"].items() if v["Type"] == "AWS::Lambda::Function"
    )


def routes_of(function: str) -> list[str]:
    source = sam_translate_source()["Resources"][function]["Properties"].get("Events", {})
    return [e["Properties"]["Path"] for e in source.values() if e["Type"] == "HttpApi"]


@functools.cache
def sam_translate_source() -> dict[str, Any]:
    from taisce.local.routes import load_template

    return load_template(TEMPLATE)


# -- API Gateway -----------------------------------------------------------------------


def test_api_gateway_may_invoke_the_authorizer() -> None:
    s = stack()
    permissions = [
        s.resolve(r["Properties"])
        for r in translated()["Resources"].values()
        if r["Type"] == "AWS::Lambda::Permission"
    ]
    authorizer_arn = s.attribute("AuthorizerFunction", "Arn")
    allowed = [
        p
        for p in permissions
        if p["FunctionName"] in (authorizer_arn, "AuthorizerFunction")
        and p["Principal"] == "apigateway.amazonaws.com"
        and p["Action"] == "lambda:InvokeFunction"
        and ":Api/authorizers/" in p["SourceArn"]
    ]
    assert allowed, "no AWS::Lambda::Permission lets the HTTP API invoke the authorizer"


def test_every_route_answers_within_api_gateways_30_seconds() -> None:
    for function in functions():
        if routes_of(function):
            timeout = translated()["Resources"][function]["Properties"]["Timeout"]
            assert timeout <= API_TIMEOUT - 1, f"{function} ({routes_of(function)}): {timeout} s"
            # A user's erasure scans again once no write that checked before it can land.
            assert Settings().write_seconds >= timeout, function


# -- DynamoDB and SQS: the calls the code made ---------------------------------------------


def _resource_arn(s: Stack, action: str, name: str) -> str:
    if action.startswith("dynamodb:"):
        return s.attribute("Table", "Arn")
    if action.startswith("sqs:"):
        return s.attribute("WorkQueue", "Arn")
    raise AssertionError(f"no resource known for {action} {name}")


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_each_role_allows_the_dynamodb_and_sqs_calls_its_code_makes(scenario: str) -> None:
    invocations, calls = run_events(vectors=scenario != "default")
    assert {i.function for i in invocations} == set(functions())  # every function ran
    s = stack(scenario)
    refused = []
    for function, made in sorted(calls.actions.items()):
        for action, name, key in sorted(made, key=str):
            if not action.startswith(("dynamodb:", "sqs:")):
                continue
            context = {"dynamodb:LeadingKeys": [key]} if key else {}
            if not s.allows(function, action, _resource_arn(s, action, name), context):
                refused.append(f"{function}: {action} ({key or 'no single key'})")
    assert refused == []


def test_no_role_may_scan_the_table() -> None:
    """A Scan reads every tenant's items, and no code path sends one (the store reads
    a project through its listing partitions; tests/contract/test_no_scan.py): no
    role may."""
    s = stack("bedrock")
    table = s.attribute("Table", "Arn")
    assert "client.scan(" not in inspect.getsource(DynamoDbStore)
    allowed = [f for f in functions() if s.allows(f, "dynamodb:Scan", table)]
    assert allowed == []


def test_the_authorizer_reads_credentials_and_nothing_else() -> None:
    s = stack()
    table = s.attribute("Table", "Arn")
    assert s.allows(
        "AuthorizerFunction", "dynamodb:GetItem", table, {"dynamodb:LeadingKeys": ["CRED#ab12"]}
    )
    assert not s.allows(
        "AuthorizerFunction",
        "dynamodb:GetItem",
        table,
        {"dynamodb:LeadingKeys": ["P#demo#E#atlas"]},
    )
    for action in ("dynamodb:Query", "dynamodb:Scan", "dynamodb:PutItem", "dynamodb:BatchGetItem"):
        assert not s.allows(
            "AuthorizerFunction", action, table, {"dynamodb:LeadingKeys": ["CRED#ab12"]}
        )


def test_the_credentials_routes_reach_credential_items_and_nothing_else() -> None:
    s = stack()
    table = s.attribute("Table", "Arn")
    assert s.allows(
        "AuthorizerFunction", "dynamodb:UpdateItem", table, {"dynamodb:LeadingKeys": ["CRED#ab"]}
    )
    for key in ("CRED#ab12", "CREDS", "CREDS#demo"):
        for action in ("dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:GetItem"):
            assert s.allows("CredentialsFunction", action, table, {"dynamodb:LeadingKeys": [key]})
    for action in ("dynamodb:GetItem", "dynamodb:Query", "dynamodb:PutItem", "dynamodb:DeleteItem"):
        assert not s.allows(
            "CredentialsFunction", action, table, {"dynamodb:LeadingKeys": ["P#demo#E#atlas"]}
        )


def test_the_worker_may_receive_from_its_own_queue_only() -> None:
    """Lambda's pollers use the worker's role: receive, delete and change visibility on
    the work queue, and on no other queue (not AWS's managed policy for every queue)."""
    s = stack()
    arns = s.managed_arns("WorkerFunction")
    assert not any(a.endswith("/AWSLambdaSQSQueueExecutionRole") for a in arns)
    mapping = next(
        r["Properties"]
        for r in translated()["Resources"].values()
        if r["Type"] == "AWS::Lambda::EventSourceMapping"
    )
    assert s.resolve(mapping["EventSourceArn"]) == s.attribute("WorkQueue", "Arn")
    assert s.resolve(mapping["FunctionName"]) == s.physical("WorkerFunction")
    assert mapping["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
    queue = s.attribute("WorkQueue", "Arn")
    other = f"arn:{PARTITION}:sqs:{REGION}:{ACCOUNT}:someone-elses.fifo"
    for action in (
        "sqs:ReceiveMessage",
        "sqs:DeleteMessage",
        "sqs:ChangeMessageVisibility",
        "sqs:GetQueueAttributes",
    ):
        assert s.allows("WorkerFunction", action, queue), action
        assert not s.allows("WorkerFunction", action, other), action


def test_the_worker_is_capped_by_its_event_source_not_by_reserved_concurrency() -> None:
    """Reserved concurrency throttles the pollers' invocations, and each throttled
    receive counts toward the dead-letter limit; the mapping's maximum concurrency
    makes the pollers wait instead."""
    mapping = next(
        r["Properties"]
        for r in translated()["Resources"].values()
        if r["Type"] == "AWS::Lambda::EventSourceMapping"
    )
    for cap in ("0", "5"):
        s = Stack(translated(), {"WorkerMaxConcurrency": cap})
        worker_props = s.resolve(translated()["Resources"]["WorkerFunction"]["Properties"])
        assert "ReservedConcurrentExecutions" not in worker_props
        scaling = s.resolve(mapping).get("ScalingConfig")
        assert scaling == ({"MaximumConcurrency": cap} if cap != "0" else None)


# -- Bedrock -------------------------------------------------------------------------------


def _model_arn(model: str) -> str:
    return f"arn:{PARTITION}:bedrock:{REGION}::foundation-model/{model}"


def _profile_arn(profile: str) -> str:
    return f"arn:{PARTITION}:bedrock:{REGION}:{ACCOUNT}:inference-profile/{profile}"


def _bedrock_calls(model: str) -> list[tuple[str, dict[str, list[str]]]]:
    """The (resource, context) pairs IAM checks for one InvokeModel/Converse call: a
    model id names the model; a profile id names the profile, then the model in the
    region the profile routes to (here another one), with the profile in the context."""
    if re.match(r"^(us|eu|apac|us-gov|global)\.", model):
        routed = f"arn:{PARTITION}:bedrock:us-west-2::foundation-model/{model.split('.', 1)[1]}"
        return [
            (_profile_arn(model), {}),
            (routed, {"bedrock:InferenceProfileArn": [_profile_arn(model)]}),
        ]
    return [(_model_arn(model), {})]


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_bedrock_rights_cover_the_models_and_profiles_each_function_calls(scenario: str) -> None:
    s = stack(scenario)
    wanted: dict[str, list[str]] = {f: [] for f in functions()}
    if s.parameter("Embeddings") == "bedrock":
        _, calls = run_events(vectors=True)
        for function, made in calls.actions.items():
            wanted[function].extend(m for a, m, _ in made if a == "bedrock:InvokeModel")
        assert wanted["RecallFunction"] == [s.parameter("EmbeddingModelId")]
    if s.parameter("Extractor") == "bedrock":
        for function in EXTRACTS:
            wanted[function].append(s.parameter("ExtractorModelId"))
    for function, models in wanted.items():
        for model in models:
            for resource, context in _bedrock_calls(model):
                assert s.allows(function, "bedrock:InvokeModel", resource, context), (
                    f"{function} may not invoke {resource}"
                )
        # Least privilege: no other model, unless called through the configured profile.
        other = _model_arn("anthropic.claude-3-opus-20240229-v1:0")
        assert not s.allows(function, "bedrock:InvokeModel", other)
        if not models:
            assert not s.allows(function, "bedrock:InvokeModel", _model_arn("*"))


# -- OpenSearch Serverless -------------------------------------------------------------------


def _data_access(s: Stack) -> dict[str, set[str]]:
    """The collection's data-access policy: the permissions granted to each principal."""
    policy = json.loads(
        s.resolve(translated()["Resources"]["VectorAccessPolicy"]["Properties"]["Policy"])
    )
    granted: dict[str, set[str]] = {}
    name = s.parameter("VectorCollectionName")
    for rule_set in policy:
        for rule in rule_set["Rules"]:
            assert rule["Resource"] == [f"index/{name}/*"]
            for principal in rule_set["Principal"]:
                granted.setdefault(principal, set()).update(rule["Permission"])
    return granted


def test_without_vectors_no_function_may_reach_a_collection() -> None:
    s = stack()
    assert not s.exists("VectorCollection")
    assert not any(s.allows(f, "aoss:APIAccessAll", "*") for f in functions())


@pytest.mark.parametrize("scenario", sorted(set(SCENARIOS) - {"default"}))
def test_each_role_and_the_data_access_policy_allow_the_vector_calls_its_code_makes(
    scenario: str,
) -> None:
    """What each function sent to the collection over the events (as a Bedrock deploy
    with a collection) must be allowed twice: aoss:APIAccessAll in its IAM role, and
    each data-access permission in the collection's policy for that role. A function
    that sent nothing has neither."""
    _, calls = run_events(vectors=True)
    s = stack(scenario)
    collection = s.attribute("VectorCollection", "Arn")
    granted = _data_access(s)
    refused = []
    for function in functions():
        role = s.attribute(s.role_of(function), "Arn")
        needed = {a for a, _, _ in calls.actions.get(function, set()) if a.startswith("aoss:")}
        if s.allows(function, "aoss:APIAccessAll", collection) != bool(needed):
            refused.append(f"{function}: aoss:APIAccessAll for {sorted(needed)}")
        for permission in sorted(needed - granted.get(role, set())):
            refused.append(f"{function}: {permission} not in the data-access policy")
        if not needed and role in granted:
            refused.append(f"{function} is a data-access principal it does not need")
    assert refused == []
    # What the deletes rest on: the recall reads, the worker writes, and a deleted
    # fact's vector is deleted by the function that deletes the fact.
    assert {"aoss:ReadDocument", "aoss:WriteDocument"} <= {
        a for a, _, _ in calls.actions["FactsFunction"]
    }


def test_a_deleted_facts_vector_leaves_the_collection() -> None:
    invocations, calls = run_events(vectors=True)
    assert calls.vectors is not None
    deleted = next(i for i in invocations if i.event_file == "facts-delete.json")
    assert deleted.answer["statusCode"] == 204
    stored = next(i for i in invocations if i.event_file == "facts-store.json")
    ids = {f["id"] for f in json.loads(stored.answer["body"])["facts"]}
    fact_id = deleted_fact_id(invocations)
    assert fact_id in ids
    indexed = calls.vectors.items("fact")
    assert ids - {fact_id} <= indexed  # the worker indexed the others
    assert fact_id not in indexed


def test_the_vector_collection_outlives_the_stack() -> None:
    collection = translated()["Resources"]["VectorCollection"]
    assert collection["DeletionPolicy"] == "Retain"
    assert collection["UpdateReplacePolicy"] == "Retain"


def _longest(pattern: str) -> int:
    import re._parser as parser  # the regex parser's own width computation

    return int(parser.parse(pattern).getwidth()[1])


def test_opensearch_names_fit_for_the_longest_collection_name_allowed() -> None:
    parameter = translated()["Parameters"]["VectorCollectionName"]
    longest = "a" * _longest(parameter["AllowedPattern"])
    assert re.fullmatch(parameter["AllowedPattern"], longest)
    s = Stack(translated(), {"Embeddings": "bedrock", "VectorCollectionName": longest})
    names = {
        logical: s.resolve(r["Properties"]["Name"])
        for logical, r in translated()["Resources"].items()
        if r["Type"].startswith("AWS::OpenSearchServerless::")
    }
    assert len(names) == 4
    for logical, name in names.items():
        assert 3 <= len(name) <= 32, f"{logical}: {name!r} has {len(name)} characters (limit 32)"


# -- the worker's time -------------------------------------------------------------------


# How long a failing message may hold its project's message group (and so every later
# pass of that project) before it is dead-lettered (docs/aws.md, "Background work").
LONGEST_GROUP_STALL = 2 * 3600


def test_the_worker_timeout_queue_visibility_and_idempotency_agree() -> None:
    resources = translated()["Resources"]
    timeout = resources["WorkerFunction"]["Properties"]["Timeout"]
    queue = resources["WorkQueue"]["Properties"]
    visibility = queue["VisibilityTimeout"]
    receives = queue["RedrivePolicy"]["maxReceiveCount"]
    # One extraction at the settings' timeout, with the time to finish, fits a pass.
    one = extraction_seconds(
        Settings().extractor_timeout, BEDROCK_CALL_ATTEMPTS, EXTRACTION_RETRY_WAIT
    )
    assert timeout <= 900
    assert timeout >= one + FINISH_SECONDS
    # AWS's rule for a Lambda event source: visibility at least 6x the function's
    # timeout (Lambda refuses a mapping whose visibility is below the timeout).
    assert visibility == 6 * timeout
    # A failed message reappears only when its visibility expires, and until then no
    # other message of its group is delivered: receives x visibility bounds the stall.
    assert receives >= 2 and visibility * receives <= LONGEST_GROUP_STALL
    # A message is processed once while it can still be delivered.
    assert visibility * receives <= worker.IDEMPOTENCY_SECONDS
