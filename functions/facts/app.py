"""POST /v1/facts, GET /v1/facts?subject=, DELETE /v1/facts/{id}."""

from typing import Annotated, Any
from urllib.parse import unquote

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.openapi.params import Body, Query

from taisce.api import UserQuery, bodies, make_handler, make_resolver, scope_of, services
from taisce.api.responses import Facts, StoredFacts, described
from taisce.domain.ingest import FactsRequest
from taisce.domain.listing import MAX_CURSOR_CHARACTERS, MAX_PAGE
from taisce.service.work import announce

app = make_resolver()


@app.post(
    "/v1/facts",
    summary="Store 1..100 facts",
    responses=described(201, StoredFacts, "Stored (or already stored)"),
)
def store_facts(request: Annotated[FactsRequest, Body(embed=False)]) -> tuple[dict[str, Any], int]:
    partition = scope_of(app, request.user)
    ids = services().memory.store_facts(partition, request)
    announce(services().queue, partition, "facts", ids)
    return bodies.stored_facts(ids), 201


@app.get(
    "/v1/facts",
    summary="The facts about one entity, a page at a time",
    responses=described(200, Facts, "A page of the facts whose subject is that entity"),
)
def list_facts(
    subject: Annotated[str, Query(min_length=1, max_length=500)],
    user: UserQuery = None,
    limit: Annotated[int | None, Query(ge=1, le=MAX_PAGE)] = None,
    cursor: Annotated[str | None, Query(min_length=1, max_length=MAX_CURSOR_CHARACTERS)] = None,
) -> dict[str, Any]:
    page = services().memory.list_facts(scope_of(app, user), subject, limit, cursor)
    return bodies.facts(page)


@app.delete(
    "/v1/facts/<fact_id>",
    summary="Delete one fact",
    responses=described(204, None, "Deleted", not_found=True),
)
def delete_fact(fact_id: str, user: UserQuery = None) -> Response[str]:
    # The route matches the raw path, so an id sent percent-encoded is decoded here.
    partition = scope_of(app, user)
    services().memory.delete_fact(partition, unquote(fact_id))
    announce(services().queue, partition, "facts", [unquote(fact_id)])
    return Response(204, "application/json", "")


lambda_handler = make_handler(app)
