"""POST /v1/recalls: a budgeted bundle of memory for one question."""

import time
from typing import Annotated, Any

from aws_lambda_powertools.event_handler.openapi.params import Body

from taisce.api import bodies, make_handler, make_resolver, scope_of, services
from taisce.api.observe import count_recall, measured_here
from taisce.api.recall_errors import recall_invalid
from taisce.api.responses import Recall, described
from taisce.domain.controls import RecallRequest
from taisce.domain.deadline import Deadline

app = make_resolver(invalid=recall_invalid)

# Of the function's time left when a recall starts, what the model and index calls
# may not use: the store's reads after them, the answer, and its serialisation.
RESERVE_SECONDS = 2.0


def deadline() -> Deadline | None:
    """When the recall stops waiting for the model and the index: the invocation's
    remaining time less the reserve (None outside Lambda: no context, no limit)."""
    context = getattr(app, "lambda_context", None)
    if context is None:
        return None
    left = context.get_remaining_time_in_millis() / 1000
    return Deadline.after(max(0.0, left - RESERVE_SECONDS))


@app.post(
    "/v1/recalls",
    summary="A budgeted bundle of memory for one question",
    responses=described(200, Recall, "The bundle, with the controls it used"),
)
def recall(request: Annotated[RecallRequest, Body(embed=False)]) -> dict[str, Any]:
    started = time.perf_counter()
    answer = services().memory.recall(scope_of(app, request.user), request, deadline())
    if measured_here(getattr(app, "lambda_context", None)):
        count_recall(answer, time.perf_counter() - started)
    return bodies.recall(answer, user=request.user)


lambda_handler = make_handler(app)
