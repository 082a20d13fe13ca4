"""The HTTP API's Lambda authorizer: bearer credential -> project.

Answers in the simple response format; API Gateway caches the answer per
Authorization header. The local server runs this same handler before each route.
"""

from typing import Any

from taisce.api import services
from taisce.credentials import bearer_secret, secret_hash


def lambda_handler(event: dict[str, Any], context: object) -> dict[str, Any]:
    headers = {k.lower(): v for k, v in (event.get("headers") or {}).items()}
    secret = bearer_secret(headers.get("authorization"))
    project = services().credentials.project_for(secret_hash(secret)) if secret else None
    if project is None:
        return {"isAuthorized": False}
    return {"isAuthorized": True, "context": {"project": project}}
