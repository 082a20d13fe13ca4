"""POST /v1/recalls: a budgeted bundle of memory for one question."""

from typing import Annotated, Any

from aws_lambda_powertools.event_handler.openapi.params import Body

from taisce.api import bodies, make_handler, make_resolver, scope_of, services
from taisce.api.recall_errors import recall_invalid
from taisce.api.responses import Recall, described
from taisce.domain.controls import RecallRequest

app = make_resolver(invalid=recall_invalid)


@app.post(
    "/v1/recalls",
    summary="A budgeted bundle of memory for one question",
    responses=described(200, Recall, "The bundle, with the controls it used"),
)
def recall(request: Annotated[RecallRequest, Body(embed=False)]) -> dict[str, Any]:
    answer = services().memory.recall(scope_of(app, request.user), request)
    return bodies.recall(answer, user=request.user)


lambda_handler = make_handler(app)
