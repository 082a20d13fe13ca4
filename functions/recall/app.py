"""POST /v1/recalls: a budgeted bundle of memory for one question."""

from typing import Annotated, Any

from aws_lambda_powertools.event_handler.openapi.params import Body

from taisce.api import bodies, make_handler, make_resolver, project_of, services
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
    return bodies.recall(services().memory.recall(project_of(app), request))


lambda_handler = make_handler(app)
