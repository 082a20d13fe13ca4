"""GET /v1/entities (listing), GET /v1/entities/neighbourhood, POST /v1/entities/merges,
GET /v1/entities/aliases, GET /v1/entities/proposals."""

from typing import Annotated, Any

from aws_lambda_powertools.event_handler.openapi.params import Body, Query

from taisce.api import UserQuery, bodies, make_handler, make_resolver, scope_of, services
from taisce.api.responses import (
    Aliases,
    EntityList,
    Merged,
    Neighbourhood,
    Proposals,
    described,
)
from taisce.domain.aliases import MergeRequest
from taisce.domain.deadline import Deadline
from taisce.domain.listing import MAX_CURSOR_CHARACTERS, MAX_PAGE

app = make_resolver()

# Of the function's time left when proposals start, what the model and index calls
# may not use: the answer and its serialisation.
RESERVE_SECONDS = 2.0


def deadline() -> Deadline | None:
    """When proposals stop waiting for the model and the index: the invocation's
    remaining time less the reserve (None outside Lambda: no context, no limit)."""
    context = getattr(app, "lambda_context", None)
    if context is None:
        return None
    left = context.get_remaining_time_in_millis() / 1000
    return Deadline.after(max(0.0, left - RESERVE_SECONDS))


@app.get(
    "/v1/entities",
    summary="The project's entities with their live facts per role, a page at a time",
    responses=described(200, EntityList, "A page of entities by key (next_cursor: the next page)"),
)
def list_entities(
    search: Annotated[str | None, Query(min_length=1, max_length=500)] = None,
    limit: Annotated[int | None, Query(ge=1, le=MAX_PAGE)] = None,
    cursor: Annotated[str | None, Query(min_length=1, max_length=MAX_CURSOR_CHARACTERS)] = None,
    user: UserQuery = None,
) -> dict[str, Any]:
    return bodies.entity_list(
        services().memory.list_entities(scope_of(app, user), search, limit, cursor)
    )


@app.get(
    "/v1/entities/neighbourhood",
    summary="An entity's live facts, and with hops 2 those of the entities they link to",
    responses=described(200, Neighbourhood, "Nodes and edges (at most 200 facts)"),
)
def neighbourhood(
    name: Annotated[str, Query(min_length=1, max_length=500)],
    hops: Annotated[int, Query(ge=1, le=2)] = 1,
    user: UserQuery = None,
) -> dict[str, Any]:
    return bodies.neighbourhood(services().memory.neighbourhood(scope_of(app, user), name, hops))


@app.post(
    "/v1/entities/merges",
    summary="Merge another name (an alias) into an entity",
    responses=described(200, Merged, "Merged (or already merged)"),
)
def merge(request: Annotated[MergeRequest, Body(embed=False)]) -> dict[str, Any]:
    return bodies.merged(services().memory.merge_entities(scope_of(app, request.user), request))


@app.get(
    "/v1/entities/aliases",
    summary="The aliases of the project, a page at a time",
    responses=described(200, Aliases, "A page of the aliases, by normalised alias"),
)
def aliases(
    user: UserQuery = None,
    limit: Annotated[int | None, Query(ge=1, le=MAX_PAGE)] = None,
    cursor: Annotated[str | None, Query(min_length=1, max_length=MAX_CURSOR_CHARACTERS)] = None,
) -> dict[str, Any]:
    return bodies.aliases(services().memory.alias_page(scope_of(app, user), limit, cursor))


@app.get(
    "/v1/entities/proposals",
    summary="Names similar enough to merge (needs an embedding model)",
    responses=described(200, Proposals, "Proposed merges, most similar first"),
)
def proposals(user: UserQuery = None) -> dict[str, Any]:
    memory = services().memory
    return bodies.proposals(memory.merge_proposals(scope_of(app, user), deadline()))


lambda_handler = make_handler(app)
