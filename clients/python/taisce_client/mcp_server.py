"""Taisce as an MCP server (stdio or streamable HTTP) for agents: `remember`, `add_facts`,
`recall` and `forget`, each a call of the Python client.

    taisce-mcp                                   # stdio, for Claude Desktop and Cursor
    taisce-mcp --transport streamable-http --port 8765

The Taisce URL and credential come from TAISCE_URL and TAISCE_API_KEY (or --url and
--api-key). An end user for the whole session comes from TAISCE_USER (or --user); each
tool also takes a `user` of its own, which wins. With a user, the tools see the shared
memory and that user's, and store into that user's. A refusal comes back as a tool
error whose structured content is the API's `{"status", "error": {"code", "message"[,
"control"]}}`, so an agent can correct itself.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Awaitable, Callable
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import MCPServer
from mcp_types import CallToolResult, TextContent
from pydantic import Field, WithJsonSchema

# pydantic needs typing_extensions' TypedDict on Python < 3.12; NotRequired is 3.11's.
from typing_extensions import NotRequired, TypedDict

from .async_client import AsyncClient
from .errors import ApiError, TaisceConnectionError, TaisceError
from .transport import settings

Role = Literal["user", "assistant", "system", "tool"]
ROLES = ["user", "assistant", "system", "tool"]
# forget waits this long for an erasure a worker completes (the client's timeout is 30 s).
FORGET_WAIT_SECONDS = 20.0


class MessageArg(TypedDict):
    role: Role
    content: Annotated[str, Field(description="the text said, or a document's text")]
    id: NotRequired[Annotated[str, Field(description="your id: sending it again stores once")]]
    source: NotRequired[Annotated[str, Field(description="where it came from, e.g. chat:42")]]
    occurred_at: NotRequired[Annotated[str, Field(description="RFC 3339 time it was said")]]


class FactArg(TypedDict):
    subject: str
    predicate: str
    object: str
    source_role: Annotated[Role, Field(description="who said it; a tool's claim is 'tool'")]
    object_kind: NotRequired[Literal["entity", "value"]]
    statement: NotRequired[str]
    quote: NotRequired[Annotated[str, Field(description="the exact words it came from")]]
    context: NotRequired[Annotated[str, Field(description="a qualifier, e.g. 'since 2021'")]]
    message_id: NotRequired[str]
    valid_from: NotRequired[str]
    valid_to: NotRequired[str]
    id: NotRequired[str]


UserArg = Annotated[
    str | None,
    Field(
        description="act for this end user (an id of A-Z a-z 0-9 . _ : @ -): see the shared "
        "memory and this user's, store into this user's; default: the session's user"
    ),
]


def _control(schema: dict[str, Any], description: str) -> Any:
    """A recall control: the schema tells the agent its type, but the value reaches the
    API as sent, so the API (the one judge of controls) refuses it with its own code
    and control name rather than this server guessing."""
    return Annotated[Any, WithJsonSchema({**schema, "description": description})]


_INTEGER = {"type": "integer"}
_TIME = {"type": "string", "format": "date-time"}
Question = _control({"type": "string"}, "what to recall, in plain words")
MaxCharacters = _control(_INTEGER, "largest answer, in code points")
MaxRows = _control(_INTEGER, "at most this many items (can only lower the server's limit)")
SourceRoles = _control({"type": "array", "items": {"enum": ROLES}}, "whose statements count")
Hops = _control(_INTEGER, "1 (default) or 2: follow links one entity further")
Surfaces = _control(
    {"type": "array", "items": {"enum": ["facts", "reports", "passages"]}},
    "which kinds of memory to search",
)
Themes = _control({"type": "boolean"}, "also the reports of the named entities")
Explain = _control({"type": "boolean"}, "every item says why it came back (`why`)")
Subjects = _control({"type": "array", "items": {"type": "string"}}, "only these entities")
AsOf = _control(_TIME, "only facts valid at this time")
RecordedAfter = _control(_TIME, "only what was recorded after this time")
RecordedBefore = _control(_TIME, "only what was recorded before this time")
MoreControls = _control({"type": "object"}, "controls this tool does not name yet, as given")

RECALL = """Recall what memory holds for a question: facts about the entities it names
(with the role of whoever said each), report summaries, and passages quoted from stored
messages, within a character budget. Controls (all optional): max_characters caps the
answer (at most the server budget); max_rows lowers the row limit; source_roles chooses
whose statements count (default ["user"]; add "tool" for documents); hops 2 also follows
links one entity further (each such fact carries the path walked); surfaces picks among
facts, reports, passages (default all); themes true adds the reports of named entities.
The answer says the characters used, whether it was truncated, and which surfaces were
degraded. Results are not ranked by relevance."""


def _result(data: Any) -> CallToolResult:
    text = json.dumps(data, ensure_ascii=False)
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=data)


def _failure(error: TaisceError) -> CallToolResult:
    if isinstance(error, ApiError):
        detail = {"code": error.code, "message": error.message}
        if error.control is not None:
            detail["control"] = error.control
        data: dict[str, Any] = {"status": error.status, "error": detail}
    else:
        # Not the API's answer: the server was unreachable, or this server lacks settings.
        code = "unavailable" if isinstance(error, TaisceConnectionError) else "not_configured"
        data = {"status": None, "error": {"code": code, "message": str(error)}}
    return CallToolResult(
        content=[TextContent(type="text", text=str(error))],
        structured_content=data,
        is_error=True,
    )


def build_server(
    url: str | None = None, api_key: str | None = None, user: str | None = None
) -> MCPServer:
    """The MCP server, talking to Taisce at `url` with `api_key` (else the environment),
    for the end user `user` unless a tool call names its own (None: the shared memory)."""
    config = settings(url, api_key, timeout=30.0, retries=3, backoff=0.5, user=user)
    server = MCPServer(
        "taisce",
        instructions="Long-term memory: remember what was said, add facts, recall before "
        "answering, forget an entity on request.",
        log_level="WARNING",
    )

    async def call(
        use: Callable[[AsyncClient], Awaitable[Any]], user: str | None
    ) -> CallToolResult:
        # One client per call: the server may run for days, and a call is rare and cheap.
        chosen = user if user is not None else config.user
        try:
            async with AsyncClient(config.url, config.api_key, user=chosen) as client:
                return _result(await use(client))
        except TaisceError as error:
            return _failure(error)

    @server.tool(
        description="Store 1-100 messages of a conversation (or documents, role "
        "'tool'); their passages become recallable. Returns their ids."
    )
    async def remember(messages: list[MessageArg], user: UserArg = None) -> CallToolResult:
        async def use(client: AsyncClient) -> Any:
            return {"ids": await client.store_messages(messages)}

        return await call(use, user)

    @server.tool(
        description="Store 1-100 facts (subject, predicate, object, and the "
        "source_role of whoever said it). Returns their ids."
    )
    async def add_facts(facts: list[FactArg], user: UserArg = None) -> CallToolResult:
        async def use(client: AsyncClient) -> Any:
            return {"ids": await client.store_facts(facts)}

        return await call(use, user)

    @server.tool(description=RECALL)
    async def recall(
        question: Question,
        max_characters: MaxCharacters = None,
        max_rows: MaxRows = None,
        source_roles: SourceRoles = None,
        hops: Hops = None,
        surfaces: Surfaces = None,
        themes: Themes = None,
        explain: Explain = None,
        subjects: Subjects = None,
        as_of: AsOf = None,
        recorded_after: RecordedAfter = None,
        recorded_before: RecordedBefore = None,
        more_controls: MoreControls = None,
        user: UserArg = None,
    ) -> CallToolResult:
        controls = {
            "max_characters": max_characters,
            "max_rows": max_rows,
            "source_roles": source_roles,
            "hops": hops,
            "surfaces": surfaces,
            "themes": themes,
            "explain": explain,
            "subjects": subjects,
            "as_of": as_of,
            "recorded_after": recorded_after,
            "recorded_before": recorded_before,
            **(more_controls if isinstance(more_controls, dict) else {}),
        }

        async def use(client: AsyncClient) -> Any:
            return (await client.recall(question, **controls)).wire()

        return await call(use, user)

    @server.tool(
        description="Erase everything memory holds about one entity (its facts, "
        "and the messages and passages about it). Returns what was erased; on a deploy "
        "whose worker erases it, waits up to 20 s and may return status pending (recall "
        "already hides the entity; the worker finishes it)."
    )
    async def forget(subject: str, user: UserArg = None) -> CallToolResult:
        async def use(client: AsyncClient) -> Any:
            return (await client.erase(subject, wait=FORGET_WAIT_SECONDS)).wire()

        return await call(use, user)

    return server


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="taisce-mcp", description="Taisce memory tools for agents over MCP."
    )
    parser.add_argument("--transport", choices=["stdio", "streamable-http"], default="stdio")
    parser.add_argument("--host", default="127.0.0.1", help="streamable HTTP address")
    parser.add_argument("--port", type=int, default=8765, help="streamable HTTP port")
    parser.add_argument("--url", help="Taisce API (default: $TAISCE_URL or 127.0.0.1:8080)")
    parser.add_argument("--api-key", help="credential (default: $TAISCE_API_KEY)")
    parser.add_argument(
        "--user", help="the end user the tools act for (default: $TAISCE_USER; none: shared)"
    )
    args = parser.parse_args(argv)
    try:
        config = settings(args.url, args.api_key, timeout=30.0, retries=3, backoff=0.5)
        if config.api_key is None:
            raise TaisceError("no credential: set TAISCE_API_KEY or pass --api-key")
    except TaisceError as error:
        print(f"taisce-mcp: {error}", file=sys.stderr)
        return 2
    user = args.user or os.environ.get("TAISCE_USER") or None
    server = build_server(config.url, config.api_key, user)
    if args.transport == "stdio":
        server.run("stdio")
    else:
        server.run("streamable-http", host=args.host, port=args.port)
    return 0


if __name__ == "__main__":
    sys.exit(main())
