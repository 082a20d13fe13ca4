"""POST /v1/messages: store messages and split them into passages."""

from typing import Annotated, Any

from aws_lambda_powertools.event_handler.openapi.params import Body

from taisce.api import make_handler, make_resolver, project_of, services
from taisce.api.responses import StoredMessages, described
from taisce.api.work import announce
from taisce.domain.ingest import MessagesRequest

app = make_resolver()


@app.post(
    "/v1/messages",
    summary="Store 1..100 messages",
    responses=described(202, StoredMessages, "Stored (or already stored)"),
)
def store_messages(
    request: Annotated[MessagesRequest, Body(embed=False)],
) -> tuple[dict[str, Any], int]:
    ids = services().memory.store_messages(project_of(app), request)
    announce(services().queue, project_of(app), "messages", ids)
    return {"messages": [{"id": i} for i in ids]}, 202


lambda_handler = make_handler(app)
