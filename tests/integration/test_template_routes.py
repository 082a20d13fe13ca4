"""template.yaml and the code agree: every route in the template reaches a route in
its function's code, every handler imports, and no code route is missing from the template."""

from __future__ import annotations

import importlib
import json
from pathlib import Path

import pytest

from taisce.local.routes import read_api

ROOT = Path(__file__).resolve().parents[2]
API = read_api(ROOT / "template.yaml")


def _event(method: str, path: str) -> dict[str, object]:
    return {
        "version": "2.0",
        "routeKey": f"{method} {path}",
        "rawPath": path,
        "rawQueryString": "",
        "headers": {"content-type": "application/json"},
        "requestContext": {
            "http": {"method": method, "path": path, "protocol": "HTTP/1.1", "sourceIp": "::1"},
            "requestId": "test",
            "routeKey": f"{method} {path}",
            "stage": "$default",
            # No project: a handler that reaches its route answers 401, not "no such route".
            "authorizer": {"lambda": {}},
        },
        "body": None,
        "isBase64Encoded": False,
    }


@pytest.mark.parametrize("route", API.routes, ids=lambda r: r.route_key)
def test_every_template_route_reaches_code(route) -> None:
    path = route.path.replace("{id}", "some-id").replace("{proxy+}", "app.js")
    result = route.function.load()(_event(route.method, path), None)
    if not route.path.startswith("/v1/"):  # the explorer's page: / sends to /ui
        assert result["statusCode"] in (200, 302)
        return
    assert json.loads(result["body"] or "{}").get("error", {}).get("message") != "no such route"


PARAMETERS = {
    "/v1/facts/{id}": "/v1/facts/<fact_id>",
    "/v1/messages/{id}": "/v1/messages/<message_id>",
    "/v1/erasures/{id}": "/v1/erasures/<erasure_id>",
    "/v1/credentials/{id}": "/v1/credentials/<credential_id>",
}
# The explorer's page (taisce.ui) is served by a plain handler, not a resolver.
API_ROUTES = [r for r in API.routes if r.path.startswith("/v1/")]


def test_every_code_route_is_in_the_template() -> None:
    in_template = {
        (r.function.module, r.method, PARAMETERS.get(r.path, r.path)) for r in API_ROUTES
    }
    modules = {r.function.module for r in API_ROUTES}
    in_code = set()
    for module in modules:
        app = importlib.import_module(module).app
        for route in app._static_routes + list(app._dynamic_routes):
            method = route.method.upper()
            in_code.add((module, method, route.path))
    assert in_code == in_template


def test_the_authorizer_is_in_the_template_and_imports() -> None:
    assert API.authorizer is not None
    assert callable(API.authorizer.load())
    unprotected = {r.route_key for r in API.routes if not r.authorized}
    assert unprotected == {
        "GET /v1/health",
        "GET /v1/openapi.json",
        "GET /",
        "GET /ui",
        "GET /ui/",
        "GET /ui/{proxy+}",
        "HEAD /ui",
        "HEAD /ui/",
        "HEAD /ui/{proxy+}",
    }


def test_the_functions_settings_in_the_template_load(monkeypatch: pytest.MonkeyPatch) -> None:
    """Globals' environment, with parameters at their defaults, is a valid Settings
    that picks the DynamoDB store and no vector index (Embeddings defaults to none)."""
    from taisce.api.wiring import open_semantic
    from taisce.local.routes import load_template
    from taisce.settings import load_settings

    template = load_template(ROOT / "template.yaml")
    defaults = {k: str(v.get("Default")) for k, v in template["Parameters"].items()}
    variables = template["Globals"]["Function"]["Environment"]["Variables"]
    conditions = {"UseVectors": defaults["Embeddings"] != "none"}

    def resolve(value: object) -> str:
        if not isinstance(value, dict):
            return str(value)
        if "Fn::If" in value:
            condition, yes, no = value["Fn::If"]
            return resolve(yes if conditions[condition] else no)
        if "Fn::GetAtt" in value:
            return "endpoint-from-stack"
        name = value["Ref"]
        return defaults.get(name, "us-east-1" if name == "AWS::Region" else "table-from-stack")

    settings = load_settings({name: resolve(value) for name, value in variables.items()})
    assert settings.store == "dynamodb"
    assert settings.dynamodb_table == "table-from-stack"
    assert settings.bundle_characters == 16_000
    assert settings.region == "us-east-1"
    assert open_semantic(settings) is None
    # With embeddings, the functions get the collection's endpoint and build its index
    # (clients only: nothing is sent; dummy credentials, as the moto tests use).
    from tests.moto_server import AWS_ENV

    for name, value in AWS_ENV.items():
        monkeypatch.setenv(name, value)
    conditions["UseVectors"] = True
    environ = {name: resolve(value) for name, value in variables.items()}
    environ["TAISCE_EMBEDDINGS"] = "bedrock"
    semantic = open_semantic(load_settings(environ))
    assert semantic is not None
    assert type(semantic.index).__name__ == "OpenSearchVectorIndex"
    assert semantic.embedder.dimensions == 1024
