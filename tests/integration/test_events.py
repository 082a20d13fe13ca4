"""The `sam local invoke` events (events/): every one runs through its function's
handler in-process, against moto's server, with events/env.json's environment
(tests/function_events.py), and its answer is checked here."""

from __future__ import annotations

import json
from typing import Any

import pytest

from functions.authorizer import app as authorizer
from taisce.local.routes import load_template
from tests.aws_calls import AwsCalls
from tests.function_events import (
    ORDER,
    Context,
    Invocation,
    environment,
    function_env,
    handler_of,
    run_events,
)
from tests.lambda_events import ENV, EVENTS, HERE
from tests.moto_server import AWS_ENV, TEMPLATE, shared_moto


def answers() -> dict[str, Invocation]:
    invocations, _ = run_events()
    return {i.event_file: i for i in invocations}


def body(name: str) -> Any:
    answer = answers()[name].answer
    return json.loads(answer["body"]) if answer.get("body") else None


def status(name: str) -> int:
    return int(answers()[name].answer["statusCode"])


def test_the_committed_events_are_what_lambda_events_writes() -> None:
    for name, (function, event) in EVENTS.items():
        assert json.loads((HERE / name).read_text()) == event, (
            f"events/{name}: rerun tests/lambda_events.py"
        )
        assert function in load_template(TEMPLATE)["Resources"], name
    assert json.loads((HERE / "env.json").read_text()) == ENV
    assert sorted(ORDER) == sorted(EVENTS)


def test_every_function_has_an_event_and_env_json_sets_only_declared_variables() -> None:
    resources = load_template(TEMPLATE)["Resources"]
    functions = {k for k, v in resources.items() if v["Type"] == "AWS::Serverless::Function"}
    assert {function for function, _ in EVENTS.values()} == functions
    declared = set(load_template(TEMPLATE)["Globals"]["Function"]["Environment"]["Variables"])
    for function in functions:
        declared |= set(
            resources[function]["Properties"].get("Environment", {}).get("Variables", {})
        )
    # sam local invoke passes only variables the template declares: others would be lost.
    assert set(ENV["Parameters"]) <= declared
    assert function_env("HealthFunction")["TAISCE_DYNAMODB_TABLE"] == "taisce-local"


def test_the_authorizer_event_is_authorized_for_its_project() -> None:
    assert answers()["authorizer.json"].answer == {
        "isAuthorized": True,
        "context": {"project": "demo", "kind": "project"},
    }


def test_a_refused_credential_raises_unauthorized_for_api_gateways_401() -> None:
    """API Gateway answers 401 {"message": "Unauthorized"} when the authorizer fails with
    exactly "Unauthorized" (a simple response's false would be a 403)."""
    run_events()  # the events' table and credential exist
    event = json.loads((HERE / "authorizer.json").read_text())
    event["headers"]["authorization"] = "Bearer tsk_not-a-real-credential"
    moto = shared_moto().table_named("taisce-events")
    env = {
        **AWS_ENV,
        **function_env("AuthorizerFunction"),
        "TAISCE_DYNAMODB_TABLE": moto.table,
        "TAISCE_DYNAMODB_ENDPOINT": moto.endpoint,
    }
    with environment(env):
        for header in ("Bearer tsk_not-a-real-credential", "Basic abc", ""):
            event["headers"]["authorization"] = header
            with pytest.raises(authorizer.Unauthorized) as refused:
                authorizer.lambda_handler(event, None)
            assert str(refused.value) == "Unauthorized"


def test_health_and_openapi_answer_without_a_credential() -> None:
    assert status("health.json") == 200
    assert body("health.json") == {"status": "ok"}
    assert status("openapi.json") == 200
    assert body("openapi.json")["openapi"].startswith("3.1")


def test_health_reads_nothing_and_status_tells_the_settings_to_a_credential() -> None:
    """Anyone may ask health, so it makes no AWS call at all (no Query of the index of
    projects with work, none of a tenant's marks) and names no setting; the settings and
    the project's pending work are status's, behind the authorizer."""
    run_events()  # the events' table exists
    moto = shared_moto().table_named("taisce-events")
    env = {
        **AWS_ENV,
        **function_env("HealthFunction"),
        "TAISCE_DYNAMODB_TABLE": moto.table,
        "TAISCE_DYNAMODB_ENDPOINT": moto.endpoint,
    }
    event = json.loads((HERE / "health.json").read_text())
    with environment(env), AwsCalls() as calls, calls.as_function("HealthFunction"):
        answer = handler_of("HealthFunction")(event, Context("HealthFunction", 10))
    assert answer["statusCode"] == 200 and json.loads(answer["body"]) == {"status": "ok"}
    assert calls.actions["HealthFunction"] == set()
    assert status("status.json") == 200
    settings = body("status.json")
    assert settings["store"] == "dynamodb" and settings["work_pending"] is False
    assert settings["bundle_characters"] > 0 and settings["max_rows"] > 0


def test_facts_are_stored_listed_recalled_and_an_unknown_id_is_not_found() -> None:
    assert status("facts-store.json") == 201
    (stored,) = body("facts-store.json")["facts"]
    listed = body("facts-list.json")["facts"]
    assert [(f["id"], f["object"]) for f in listed] == [(stored["id"], "Acme Corp")]
    assert status("recall.json") == 200
    recalled = body("recall.json")
    assert recalled["controls"]["hops"] == 2
    assert stored["id"] in [f["id"] for f in recalled["facts"]]
    assert status("facts-delete.json") == 404
    assert body("facts-delete.json")["error"]["code"] == "not_found"


def test_messages_are_accepted_and_the_worker_does_the_projects_work() -> None:
    assert status("messages-store.json") == 202
    assert len(body("messages-store.json")["messages"]) == 2
    assert answers()["worker-sqs.json"].answer == {"batchItemFailures": []}
    # The SQS pass did the project's work: the sweep finds no project left with marks.
    assert answers()["worker-schedule.json"].answer == {"projects": 0}


def test_entities_merge_list_aliases_and_answer_proposals() -> None:
    assert body("entities-merge.json")["into"] == "Atlas"
    assert {"alias": "A. Atlas", "into": "Atlas"} in body("entities-aliases.json")["aliases"]
    proposals = body("entities-proposals.json")
    assert proposals["proposals"] == [] and proposals["degraded"] == ["proposals"]


def test_the_listings_show_what_the_events_stored() -> None:
    entities = body("entities-list.json")["entities"]
    assert {e["name"] for e in entities} >= {"Atlas", "Acme Corp"}
    edges = body("entities-neighbourhood.json")["edges"]
    assert [(e["source"], e["predicate"], e["target"]) for e in edges] == [
        ("e:atlas", "works at", "e:acme corp")
    ]
    messages = body("messages-list.json")["messages"]
    assert {m["content"] for m in messages} == {
        "Atlas moved to Acme Corp in March.",
        "Noted: Atlas works at Acme Corp.",
    }
    # The event asks for passages=true: each message comes with its own passages.
    for m in messages:
        assert m["passages"], m
        assert all(p["message_id"] == m["id"] for p in m["passages"])
        assert all(m["content"][p["start"] : p["end"]] == p["quote"] for p in m["passages"])


def test_the_explorer_page_is_served_without_a_credential() -> None:
    assert status("ui-page.json") == 200
    answer = answers()["ui-page.json"].answer
    assert "text/html" in answer["headers"]["Content-Type"]
    assert "Content-Security-Policy" in answer["headers"]


def test_the_erasure_is_accepted_then_done_by_the_worker() -> None:
    assert status("erasures.json") == 202
    accepted = body("erasures.json")
    assert accepted["status"] == "pending" and set(accepted["erased"].values()) == {0}
    assert answers()["worker-erasure.json"].answer == {"batchItemFailures": []}
    assert status("erasures-status.json") == 200
    done = body("erasures-status.json")
    assert done["id"] == accepted["id"] and done["status"] == "done"
    erased = done["erased"]
    assert erased["facts"] == 1 and erased["messages"] == 2


def test_an_admin_mints_lists_and_revokes_a_user_credential() -> None:
    assert status("credentials-mint.json") == 201
    minted = body("credentials-mint.json")
    assert (minted["kind"], minted["user"], minted["label"]) == ("user", "ana", "ana's phone")
    assert minted["secret"].startswith("tsk_")
    listed = body("credentials-list.json")["credentials"]
    assert [(c["id"], c["kind"]) for c in listed if c["id"] == minted["id"]] == [
        (minted["id"], "user")
    ]
    assert all("secret" not in c for c in listed)
    assert status("credentials-revoke.json") == 204
