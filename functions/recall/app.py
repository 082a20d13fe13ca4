"""POST /v1/recalls: a budgeted bundle of memory for one question.
GET /v1/search/facts, GET /v1/search/messages: what holds some words, best first."""

import time
from typing import Annotated, Any

from aws_lambda_powertools.event_handler.openapi.params import Body, Query

from taisce.api import UserQuery, bodies, make_handler, make_resolver, scope_of, services
from taisce.api.observe import count_recall, measured_here
from taisce.api.recall_errors import recall_invalid
from taisce.api.responses import Recall, SearchedFacts, SearchedMessages, described
from taisce.domain.controls import RecallRequest
from taisce.domain.deadline import Deadline
from taisce.domain.listing import MAX_CURSOR_CHARACTERS, MAX_PAGE
from taisce.domain.model import Role
from taisce.domain.search import MAX_SEARCH_CHARACTERS

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


Words = Annotated[
    str,
    Query(min_length=1, max_length=MAX_SEARCH_CHARACTERS, description="The words to search for"),
]
Limit = Annotated[int | None, Query(ge=1, le=MAX_PAGE)]
Cursor = Annotated[str | None, Query(min_length=1, max_length=MAX_CURSOR_CHARACTERS)]


@app.get(
    "/v1/search/facts",
    summary="The facts holding some words, best first, a page at a time",
    responses=described(200, SearchedFacts, "A page of the facts that match"),
)
def search_facts(
    q: Words,
    role: Annotated[Role | None, Query()] = None,
    limit: Limit = None,
    cursor: Cursor = None,
    user: UserQuery = None,
) -> dict[str, Any]:
    partition = scope_of(app, user)
    found = services().memory.search_facts(partition, q, role, limit, cursor, deadline())
    return bodies.searched_facts(found)


@app.get(
    "/v1/search/messages",
    summary="The messages holding some words, best first, a page at a time",
    responses=described(200, SearchedMessages, "A page of the messages that match"),
)
def search_messages(
    q: Words,
    role: Annotated[Role | None, Query()] = None,
    source: Annotated[str | None, Query(min_length=1, max_length=500)] = None,
    limit: Limit = None,
    cursor: Cursor = None,
    user: UserQuery = None,
) -> dict[str, Any]:
    memory = services().memory
    found = memory.search_messages(scope_of(app, user), q, role, source, limit, cursor, deadline())
    return bodies.searched_messages(found)


lambda_handler = make_handler(app)
