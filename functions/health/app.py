"""GET /v1/health: liveness and configuration, without secrets or credentials."""

from typing import Any

import taisce
from taisce.api import make_handler, make_resolver, services

app = make_resolver()


@app.get("/v1/health")
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


lambda_handler = make_handler(app)
