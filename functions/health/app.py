"""GET /v1/health: liveness and configuration, without secrets or credentials.
GET /v1/openapi.json: the API's OpenAPI description (public, like health)."""

from typing import Any

from aws_lambda_powertools.event_handler import Response

import taisce
from taisce.api import make_handler, make_resolver, services
from taisce.api.openapi import served_document
from taisce.api.responses import Health, described

app = make_resolver()


@app.get(
    "/v1/health",
    summary="Liveness and configuration",
    responses=described(200, Health, "Up, with its settings (no secrets)"),
)
def health() -> dict[str, Any]:
    settings = services().settings
    return {
        "status": "ok",
        "version": taisce.__version__,
        "store": settings.store,
        "embeddings": settings.embeddings,
        "bundle_characters": settings.bundle_characters,
        "max_rows": settings.max_rows,
        # True while reports wait to be rebuilt after writes (they follow shortly).
        "work_pending": services().memory.work_pending(),
    }


@app.get(
    "/v1/openapi.json",
    summary="This description",
    responses=described(200, {"type": "object"}, "The OpenAPI 3.1 document"),
)
def openapi() -> Response[str]:
    return Response(200, "application/json", served_document())


lambda_handler = make_handler(app)
