"""The HTTP API's Lambda authorizer: bearer credential -> project.

A known credential gets the simple response `{"isAuthorized": true, "context":
{"project": ...}}`, which API Gateway caches per Authorization header. An unknown,
revoked or malformed one raises `Unauthorized`, whose message is exactly
"Unauthorized": API Gateway then answers 401 `{"message": "Unauthorized"}`, as it does
for a missing header. (A simple response with isAuthorized false would be a 403
`{"message": "Forbidden"}`, which is not what docs/API.md promises.) The local server
runs this same handler before each route and answers 401 in the API's own shape.
"""

from typing import Any

from taisce.api import services
from taisce.credentials import bearer_secret, secret_hash

# API Gateway turns an authorizer failure with exactly this message into a 401.
REFUSED = "Unauthorized"


class Unauthorized(Exception):
    def __init__(self) -> None:
        super().__init__(REFUSED)


def lambda_handler(event: dict[str, Any], context: object) -> dict[str, Any]:
    headers = {k.lower(): v for k, v in (event.get("headers") or {}).items()}
    secret = bearer_secret(headers.get("authorization"))
    project = services().credentials.project_for(secret_hash(secret)) if secret else None
    if project is None:
        raise Unauthorized()
    return {"isAuthorized": True, "context": {"project": project}}
