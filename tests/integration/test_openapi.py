"""The OpenAPI description: current with the code, served, and kept by the server.

schemathesis reads the committed docs/openapi.json, generates requests from it (valid
and invalid ones, boundary values first), sends them to a real `taisce serve` with a
live credential, and checks every answer: no 5xx, only documented status codes and
content types, and bodies that match the documented schema.
"""

from __future__ import annotations

import difflib
import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from openapi_spec_validator import OpenAPIV31SpecValidator
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from taisce.api.openapi import build_document, render
from tests.server import ROOT, LocalServer, start_server, wait_for_worker

COMMITTED = ROOT / "docs" / "openapi.json"
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
]
# Bounded for CI: the explicit boundary cases of every field, then this many
# generated requests per operation, the same ones every run.
EXAMPLES = 40
PUBLIC = {("get", "/v1/health"), ("get", "/v1/openapi.json")}

# A small memory, so that recalls answer with facts (and hop-2 paths), reports
# and passages, and every part of the answer's schema is checked.
MESSAGES = [
    {
        "id": "m1",
        "role": "user",
        "source": "chat:1",
        "content": "Atlas started at Acme Corp last month. His manager there is Maya Okafor.",
    },
    {
        "id": "m2",
        "role": "tool",
        "source": "docs/handbook.md",
        "content": "Acme Corp is in Dublin.",
    },
]
FACTS = [
    {
        "id": "f1",
        "subject": "Atlas",
        "predicate": "works at",
        "object": "Acme Corp",
        "source_role": "user",
        "message_id": "m1",
        "quote": "Atlas started at Acme Corp last month.",
    },
    {
        "id": "f2",
        "subject": "Maya Okafor",
        "predicate": "manages",
        "object": "Atlas",
        "source_role": "user",
        "message_id": "m1",
        "valid_from": "2026-01-01T00:00:00+01:00",
    },
    {
        "id": "f3",
        "subject": "Acme Corp",
        "predicate": "is based in",
        "object": "Dublin",
        "source_role": "tool",
        "message_id": "m2",
    },
    {
        "id": "f4",
        "subject": "Atlas",
        "predicate": "age",
        "object": "34",
        "object_kind": "value",
        "source_role": "user",
        "context": "in 2026",
    },
]


def _drain(stream: TextIO | None) -> None:
    """Read a server pipe, so that logged tracebacks can never fill it and stall it."""
    if stream is None:
        return
    try:
        for _ in iter(stream.readline, ""):
            pass
    except (OSError, ValueError):
        pass  # closed by stop()


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalServer]:
    """A server of its own with the local model: all four recall steps run."""
    running = start_server(
        Path(tmp_path_factory.mktemp("openapi-data")), {"TAISCE_EMBEDDINGS": "local"}
    )
    for stream in (running.process.stdout, running.process.stderr):
        threading.Thread(target=_drain, args=(stream,), daemon=True).start()
    yield running
    running.stop()


@pytest.fixture(scope="module")
def credential(api: LocalServer) -> str:
    """A live credential for a project that holds the small memory above."""
    secret = api.new_credential("openapi")
    with api.client(secret) as http:
        assert http.post("/v1/messages", json={"messages": MESSAGES}).status_code == 202
        assert http.post("/v1/facts", json={"facts": FACTS}).status_code == 201
        wait_for_worker(http, message="reports and vectors were not built in time")
    return secret


def _committed() -> dict[str, Any]:
    return json.loads(COMMITTED.read_text(encoding="utf-8"))


# -- the document -------------------------------------------------------------------------


def test_the_committed_description_matches_the_code() -> None:
    generated = render(build_document(ROOT / "template.yaml"))
    committed = COMMITTED.read_text(encoding="utf-8")
    if committed != generated:
        diff = difflib.unified_diff(
            committed.splitlines(),
            generated.splitlines(),
            "committed",
            "from the code",
            lineterm="",
        )
        pytest.fail(
            "docs/openapi.json is out of date with the code and template.yaml: "
            "run `make openapi` and commit the result.\n" + "\n".join(list(diff)[:40]),
            pytrace=False,
        )


def test_the_description_is_valid_openapi_3_1() -> None:
    errors = [e.message for e in OpenAPIV31SpecValidator(_committed()).iter_errors()]
    assert errors == []


def test_every_route_but_the_public_two_needs_the_bearer_credential() -> None:
    document = _committed()
    assert document["openapi"].startswith("3.1")
    assert document["components"]["securitySchemes"]["bearer"] == {
        "type": "http",
        "scheme": "bearer",
        "description": "A credential from `taisce credentials create` or POST /v1/credentials",
    }
    operations = [
        (method, path, operation)
        for path, item in document["paths"].items()
        for method, operation in item.items()
    ]
    assert len(operations) >= 7
    for method, path, operation in operations:
        responses = operation["responses"]
        if (method, path) in PUBLIC:
            assert "security" not in operation and "401" not in responses, path
        else:
            assert operation["security"] == [{"bearer": []}], path
            assert "401" in responses and "403" in responses, path
        assert "422" not in responses, path
        for status in ("400", "413", "500"):
            error = responses[status]["content"]["application/json"]["schema"]
            assert error == {"$ref": "#/components/schemas/ErrorBody"}, (path, status)


def test_the_description_is_served_without_a_credential(api: LocalServer) -> None:
    r = httpx.get(f"{api.url}/v1/openapi.json", timeout=30)
    assert r.status_code == 200, r.text
    assert r.headers["content-type"].startswith("application/json")
    assert r.json() == _committed()


# -- the server keeps to it ---------------------------------------------------------------

schema = schemathesis.openapi.from_path(COMMITTED)


def _keeps_to_its_description(operation: schemathesis.BaseSchema) -> Any:
    """The test of one operation: schemathesis' items share one test id, which a
    runner that dispatches tests by id (pytest-xdist) would run once for all of them;
    one function per operation gives each its own id."""

    @operation.parametrize()
    @settings(
        max_examples=EXAMPLES,
        derandomize=True,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    def test(case: schemathesis.Case, api: LocalServer, credential: str) -> None:
        case.call_and_validate(
            base_url=api.url,
            headers={"Authorization": f"Bearer {credential}"},
            checks=CHECKS,
            timeout=30,
        )

    return test


def _test_name(method: str, path: str) -> str:
    words = "_".join(w.strip("{}") for w in path.strip("/").split("/"))
    return f"test_the_server_keeps_to_its_description_{method}_{words.replace('.', '_')}"


OPERATIONS = [r.ok() for r in schema.get_all_operations()]
for _op in OPERATIONS:
    globals()[_test_name(_op.method, _op.path)] = _keeps_to_its_description(
        schema.include(method=_op.method.upper(), path=_op.path)
    )


def test_each_operation_has_a_test_of_its_own() -> None:
    names = {_test_name(o.method, o.path) for o in OPERATIONS}
    assert len(names) == len(OPERATIONS) >= 20
    assert all(callable(globals().get(n)) for n in names)


RECALLS = [
    {
        "question": "What about Atlas?",
        "hops": 2,
        "source_roles": ["user", "tool"],
        "themes": True,
        "explain": True,
    },
    {"question": "Which city is the company in?", "source_roles": ["user", "assistant", "tool"]},
    {"question": "Atlas", "max_characters": 60, "surfaces": ["facts", "passages"]},
]


@pytest.mark.parametrize("body", RECALLS, ids=lambda b: b["question"])
def test_full_answers_keep_to_the_description(
    api: LocalServer, credential: str, body: dict[str, Any]
) -> None:
    """Answers with facts, hop-2 paths, reports and passages, checked against the schema."""
    case = schema["/v1/recalls"]["POST"].Case(body=body)
    response = case.call_and_validate(
        base_url=api.url,
        headers={"Authorization": f"Bearer {credential}"},
        checks=CHECKS,
        timeout=30,
    )
    answer = response.json()
    if body.get("hops") == 2:
        assert any("path" in f for f in answer["facts"]), answer
        assert answer["reports"] and answer["passages"], answer
    elif "max_characters" in body:
        assert answer["truncated"] and answer["characters"] <= body["max_characters"], answer
    else:
        assert answer["passages"], answer


def test_listed_facts_keep_to_the_description(api: LocalServer, credential: str) -> None:
    case = schema["/v1/facts"]["GET"].Case(query={"subject": "atlas"})
    response = case.call_and_validate(
        base_url=api.url,
        headers={"Authorization": f"Bearer {credential}"},
        checks=CHECKS,
        timeout=30,
    )
    assert {f["id"] for f in response.json()["facts"]} == {"f1", "f4"}


def test_a_deleted_fact_keeps_to_the_description(api: LocalServer, credential: str) -> None:
    """204 with no body, then 404 in the error shape: generated ids never name a fact."""
    fact = {**FACTS[0], "id": "to-delete", "subject": "Deletable"}
    with api.client(credential) as http:
        assert http.post("/v1/facts", json={"facts": [fact]}).status_code == 201
    operation = schema["/v1/facts/{fact_id}"]["DELETE"]
    statuses = []
    for _ in range(2):
        case = operation.Case(path_parameters={"fact_id": "to-delete"})
        response = case.call_and_validate(
            base_url=api.url,
            headers={"Authorization": f"Bearer {credential}"},
            checks=CHECKS,
            timeout=30,
        )
        statuses.append(response.status_code)
    assert statuses == [204, 404]


def _validator(name: str) -> Any:
    """A validator for one component schema of the committed description, its $refs
    resolved within the document."""
    from jsonschema import Draft202012Validator
    from referencing import Registry, Resource
    from referencing.jsonschema import DRAFT202012

    document = _committed()
    resource = Resource.from_contents(document, default_specification=DRAFT202012)
    registry = Registry().with_resource("urn:taisce", resource)
    return Draft202012Validator(
        {"$ref": f"urn:taisce#/components/schemas/{name}"}, registry=registry
    )


def test_an_explained_answer_keeps_to_the_description(api: LocalServer, credential: str) -> None:
    """`why` is described for each kind of item, and a real explained answer (facts,
    reports and passages) holds it on every item, valid against that description."""
    schemas = _committed()["components"]["schemas"]
    kinds = {"facts": "RecalledFact", "reports": "RecalledReport", "passages": "RecalledPassage"}
    for kind, name in kinds.items():
        assert "why" in schemas[name]["properties"], name
        assert schemas["Recall"]["properties"][kind]["items"] == {
            "$ref": f"#/components/schemas/{name}"
        }
    body = {
        "question": "Where does Atlas work?",
        "hops": 2,
        "source_roles": ["user", "tool"],
        "themes": True,
        "explain": True,
    }
    with api.client(credential) as http:
        r = http.post("/v1/recalls", json=body)
    assert r.status_code == 200, r.text
    answer = r.json()
    assert answer["controls"]["explain"] is True
    _validator("Recall").validate(answer)
    steps = {"facts": {"exact_name"}, "reports": {"report"}, "passages": {"passage"}}
    for kind, name in kinds.items():
        assert answer[kind], kind
        validator = _validator(name)
        for item in answer[kind]:
            assert item["why"]["step"] in steps[kind], item
            validator.validate(item)
            # The description can fail an answer: a why that is not the step's own.
            wrong = {**item, "why": {**item["why"], "step": "guess"}}
            assert list(validator.iter_errors(wrong)), (kind, wrong)
