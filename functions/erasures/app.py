"""POST /v1/erasures: erase everything held about one entity; GET /v1/erasures/{id}: its
status. On DynamoDB the erasure is accepted (202) and the worker completes it; the
embedded store completes it in the request (200). Both answer the same body."""

from typing import Annotated, Any
from urllib.parse import unquote

from aws_lambda_powertools.event_handler.openapi.params import Body

from taisce.api import UserQuery, bodies, make_handler, make_resolver, scope_of, services
from taisce.api.responses import ErasureAnswer, described
from taisce.domain.erasure import ErasureRequest
from taisce.domain.errors import InvalidRequest
from taisce.domain.scope import project_of_partition
from taisce.service.work import announce

app = make_resolver()


@app.post(
    "/v1/erasures",
    summary="Erase everything held about one entity",
    responses={
        **described(200, ErasureAnswer, "Erased now (zero counts when nothing was held)"),
        **described(202, ErasureAnswer, "Accepted: the worker erases it; see status_url"),
    },
)
def erase(request: Annotated[ErasureRequest, Body(embed=False)]) -> tuple[dict[str, Any], int]:
    built = services()
    partition = scope_of(app, request.user)
    if request.subject is None and request.user is None:
        raise InvalidRequest("subject (a name) or user is required")
    if request.subject is None:
        # The embedded store erases a user's scope in the request (200); DynamoDB
        # records it under the project for the worker (202).
        status = built.memory.erase_user(partition)
        owner = project_of_partition(partition)
    else:
        status = built.memory.request_erasure(partition, request.subject)
        owner = partition
    if status.status == "pending":
        announce(built.queue, owner, "erasure", [status.id])
        return bodies.erasure(status, request.user), 202
    return bodies.erasure(status, request.user), 200


@app.get(
    "/v1/erasures/<erasure_id>",
    summary="The status of one erasure",
    responses=described(200, ErasureAnswer, "Pending or done, with counts", not_found=True),
)
def erasure_status(erasure_id: str, user: UserQuery = None) -> dict[str, Any]:
    status = services().memory.erasure_status(scope_of(app, user), unquote(erasure_id))
    return bodies.erasure(status, user)


lambda_handler = make_handler(app)
