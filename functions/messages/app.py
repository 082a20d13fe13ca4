"""POST /v1/messages: store messages and split them into passages.
GET /v1/messages: the messages, newest first; GET /v1/messages/{id}: one, with its passages."""

from typing import Annotated, Any
from urllib.parse import unquote

from aws_lambda_powertools.event_handler.openapi.params import Body, Query

from taisce.api import UserQuery, bodies, make_handler, make_resolver, scope_of, services
from taisce.api.responses import MessageList, MessageWithPassages, StoredMessages, described
from taisce.domain.ingest import MessagesRequest
from taisce.domain.listing import MAX_CURSOR_CHARACTERS, MAX_PAGE
from taisce.domain.model import Role
from taisce.service.work import announce

app = make_resolver()


@app.post(
    "/v1/messages",
    summary="Store 1..100 messages",
    responses=described(202, StoredMessages, "Stored (or already stored)"),
)
def store_messages(
    request: Annotated[MessagesRequest, Body(embed=False)],
) -> tuple[dict[str, Any], int]:
    partition = scope_of(app, request.user)
    ids = services().memory.store_messages(partition, request)
    announce(services().queue, partition, "messages", ids)
    return bodies.stored_messages(ids), 202


@app.get(
    "/v1/messages",
    summary="The stored messages, newest first, a page at a time",
    responses=described(200, MessageList, "A page of messages (next_cursor: the next page)"),
)
def list_messages(
    role: Annotated[Role | None, Query()] = None,
    source: Annotated[str | None, Query(min_length=1, max_length=500)] = None,
    limit: Annotated[int | None, Query(ge=1, le=MAX_PAGE)] = None,
    cursor: Annotated[str | None, Query(min_length=1, max_length=MAX_CURSOR_CHARACTERS)] = None,
    passages: Annotated[
        bool | None,
        Query(description="true: each message carries its passages (by start)"),
    ] = None,
    user: UserQuery = None,
) -> dict[str, Any]:
    page = services().memory.list_messages(
        scope_of(app, user), role, source, limit, cursor, passages=bool(passages)
    )
    return bodies.message_list(page)


@app.get(
    "/v1/messages/<message_id>",
    summary="One message with its passages",
    responses=described(200, MessageWithPassages, "The message and its passages", not_found=True),
)
def get_message(message_id: str, user: UserQuery = None) -> dict[str, Any]:
    # The route matches the raw path, so an id sent percent-encoded is decoded here.
    shown = services().memory.message_with_passages(scope_of(app, user), unquote(message_id))
    return bodies.message_with_passages(shown)


lambda_handler = make_handler(app)
