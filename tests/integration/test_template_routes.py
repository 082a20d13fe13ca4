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
    path = route.path.replace("{id}", "some-id")
    result = route.function.load()(_event(route.method, path), None)
    assert json.loads(result["body"] or "{}").get("error", {}).get("message") != "no such route"


def test_every_code_route_is_in_the_template() -> None:
    in_template = {
        (r.function.module, r.method, r.path.replace("{id}", "<fact_id>")) for r in API.routes
    }
    modules = {r.function.module for r in API.routes}
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
    assert unprotected == {"GET /v1/health", "GET /v1/openapi.json"}


def test_the_functions_settings_in_the_template_load() -> None:
    """Globals' environment, with parameters at their defaults, is a valid Settings
    that picks the DynamoDB store and no vector index (not built for AWS yet)."""
    from taisce.api.wiring import open_semantic
    from taisce.local.routes import load_template
    from taisce.settings import load_settings

    template = load_template(ROOT / "template.yaml")
    defaults = {k: str(v.get("Default")) for k, v in template["Parameters"].items()}
    variables = template["Globals"]["Function"]["Environment"]["Variables"]
    environ = {
        name: defaults[value["Ref"]]
        if isinstance(value, dict) and value["Ref"] in defaults
        else "table-from-stack"
        if isinstance(value, dict)
        else str(value)
        for name, value in variables.items()
    }
    settings = load_settings(environ)
    assert settings.store == "dynamodb"
    assert settings.dynamodb_table == "table-from-stack"
    assert settings.bundle_characters == 16_000
    assert open_semantic(settings) is None
