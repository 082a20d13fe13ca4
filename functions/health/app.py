"""GET /v1/health: liveness only, with no credential: it reads nothing and says nothing
of the deploy, so an anonymous caller can neither learn the configuration nor make the
store work. GET /v1/status: the version, the settings and whether the worker has work
for the caller's project (a credential's route). GET /v1/openapi.json: the API's
OpenAPI description (public, like health)."""

from typing import Any

from aws_lambda_powertools.event_handler import Response

import taisce
from taisce.api import make_handler, make_resolver, services
from taisce.api.openapi import served_document
from taisce.api.resolver import caller_of
from taisce.api.responses import Health, Status, described

app = make_resolver()


@app.get(
    "/v1/health",
    summary="Liveness",
    responses=described(200, Health, "Up"),
)
def health() -> dict[str, Any]:
    return {"status": "ok"}


@app.get(
    "/v1/status",
    summary="Version, settings and the caller's project's pending work",
    responses=described(200, Status, "The deploy's settings (no secrets), for this project"),
)
def status() -> dict[str, Any]:
    project = caller_of(app).project
    settings = services().settings
    return {
        "version": taisce.__version__,
        "store": settings.store,
        "embeddings": settings.embeddings,
        "bundle_characters": settings.bundle_characters,
        "max_rows": settings.max_rows,
        # True while this project's reports, vectors or erasures wait for the worker.
        "work_pending": services().memory.project_work_pending(project),
    }


@app.get(
    "/v1/openapi.json",
    summary="This description",
    responses=described(200, {"type": "object"}, "The OpenAPI 3.1 document"),
)
def openapi() -> Response[str]:
    return Response(200, "application/json", served_document())


lambda_handler = make_handler(app)
