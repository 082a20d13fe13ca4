"""POST /v1/entities/merges, GET /v1/entities/aliases, GET /v1/entities/proposals."""

from typing import Annotated, Any

from aws_lambda_powertools.event_handler.openapi.params import Body

from taisce.api import make_handler, make_resolver, project_of, services
from taisce.api.responses import Aliases, Merged, Proposals, described
from taisce.domain.aliases import MergeRequest

app = make_resolver()


@app.post(
    "/v1/entities/merges",
    summary="Merge another name (an alias) into an entity",
    responses=described(200, Merged, "Merged (or already merged)"),
)
def merge(request: Annotated[MergeRequest, Body(embed=False)]) -> dict[str, Any]:
    return services().memory.merge_entities(project_of(app), request)


@app.get(
    "/v1/entities/aliases",
    summary="Every alias of the project",
    responses=described(200, Aliases, "The aliases, by normalised alias"),
)
def aliases() -> dict[str, Any]:
    return services().memory.aliases(project_of(app))


@app.get(
    "/v1/entities/proposals",
    summary="Names similar enough to merge (needs an embedding model)",
    responses=described(200, Proposals, "Proposed merges, most similar first"),
)
def proposals() -> dict[str, Any]:
    return services().memory.merge_proposals(project_of(app))


lambda_handler = make_handler(app)
