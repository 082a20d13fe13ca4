"""The bodies the API answers with: the one description of each, from which the OpenAPI
document is generated (api/openapi.py).

api/bodies.py builds each body from the domain's records through these models
(validated, then dumped with only the keys that apply: absent, never null), except
the recall's, written by hand there because validating it cost about 4% of a
recall's p50, and the stored ids (about 1% of a storing request).
tests/unit/test_bodies.py checks that every body, the recall's included, comes back
from its model unchanged, and the schemathesis run in tests/integration/test_openapi.py
that the server keeps to them.
Objects may gain fields in later versions, so none of them forbids unknown keys: a
client ignores what it does not know.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, RootModel, WithJsonSchema
from pydantic.json_schema import SkipJsonSchema

from ..domain.model import ObjectKind, Role, Surface

# Every code the server answers with (tests/unit/test_openapi_errors.py finds each one
# the code can send and checks it is here and described under its status).
ErrorCode = Literal[
    "invalid_request",
    "invalid_recall_controls",
    "unauthorized",
    "forbidden",
    "not_found",
    "method_not_allowed",
    "erasure_pending",
    "request_timeout",
    "payload_too_large",
    "answer_too_large",
    "rate_limited",
    "internal",
    "unavailable",
    "http_version_not_supported",
    "insufficient_storage",
]


# RFC 3339, always in UTC with a Z.
Moment = Annotated[str, Field(json_schema_extra={"format": "date-time"})]
# Keys the server leaves out when they do not apply: absent, never null.
OmittableText = Annotated[str | None, WithJsonSchema({"type": "string"})]
OmittableNames = Annotated[
    list[str] | None, WithJsonSchema({"type": "array", "items": {"type": "string"}})
]


class ErrorDetail(BaseModel):
    code: ErrorCode
    message: str = Field(description="What was wrong, in plain words; never a trace.")
    control: OmittableText = Field(
        default=None, description="The refused recall control (invalid_recall_controls only)."
    )
    request_id: OmittableText = Field(
        default=None, description="The id to find the failure in the logs (internal only)."
    )


class ErrorBody(BaseModel):
    """Every error: {"error": {"code", "message"[, "control"][, "request_id"]}}."""

    error: ErrorDetail


class StoredId(BaseModel):
    id: str


class StoredFacts(BaseModel):
    facts: list[StoredId] = Field(description="The ids of the facts, in request order.")


class StoredMessages(BaseModel):
    messages: list[StoredId] = Field(description="The ids of the messages, in request order.")


class Fact(BaseModel):
    id: str
    subject: str
    predicate: str
    object: str
    object_kind: ObjectKind
    statement: str
    source_role: Role
    quote: str | None
    context: str | None
    message_id: str | None
    valid_from: Moment | None
    valid_to: Moment | None
    recorded_at: Moment
    quote_start: int | None = Field(
        default=None, ge=0, description="Extracted facts: code-point offset of quote."
    )
    quote_end: int | None = Field(default=None, ge=0)


class Facts(BaseModel):
    facts: list[Fact] = Field(description="In storing order.")
    next_cursor: str | None = Field(
        description="Pass as cursor for the next page; null at the end."
    )


# `why` (with `explain: true`): how an item was found. `step` and `matched` are always
# there; the signals are those the step used (docs/API.md, "explain"). Not counted in
# `characters`. Signals a step does not use are absent.
Signal = float | None
Rank = Annotated[int | None, Field(ge=1)]


class FactWhy(BaseModel):
    step: Literal["exact_name", "similar_name"]
    reason: str = Field(
        description='The numbers above in one line of plain words ("named atlas exactly; '
        "words 'work', 'manager' matched\"); not counted against the budget."
    )
    matched: str = Field(description="The normalised matched name it was reached through.")
    hop: int = Field(default=1, ge=1, le=2)
    words: Signal = Field(default=None, description="How much of what is asked it holds, 0-1.")
    similarity: Signal = Field(
        default=None, description="Cosine with the question; null without a vector."
    )
    score: Signal = Field(default=None, description="The score it was ranked by.")
    path: bool = Field(
        default=False,
        description="Returned on a path (hops 2): a link of a matched entity nearest the "
        "question, or one of its linked entity's facts nearest the question with its names "
        "taken out.",
    )
    neutral_similarity: Signal = Field(
        default=None,
        description="On a path at hop 2: cosine with the question, its names taken out.",
    )
    asked_as: str | None = Field(
        default=None,
        description="Step 2 (similar_name): the question's words that found the name, as written.",
    )
    signal: Literal["spelling", "meaning", "part", "case"] | None = Field(
        default=None,
        description="Step 2: how those words found it: spelling (a few edits, or a joined "
        'genitive "s"), meaning (the name\'s vector), part (a given or family name), case '
        "(a case form, in a language that inflects names).",
    )


class ReportWhy(BaseModel):
    step: Literal["report"]
    reason: str = Field(
        description='The numbers above in one line of plain words ("named atlas exactly; '
        "words 'work', 'manager' matched\"); not counted against the budget."
    )
    matched: str | None = Field(
        description="With themes, the normalised matched name it was reached through; else null."
    )
    words: Signal = Field(default=None, description="How much of what is asked it holds, 0-1.")
    similarity: Signal = Field(
        default=None, description="Cosine with the question; null without a vector."
    )
    score: Signal = Field(default=None, description="The score it was ranked by.")


class PassageWhy(BaseModel):
    step: Literal["passage"]
    reason: str = Field(
        description='The numbers above in one line of plain words ("named atlas exactly; '
        "words 'work', 'manager' matched\"); not counted against the budget."
    )
    matched: None
    vector_rank: Rank = Field(
        default=None, description="1-based rank among the nearest by vector; null if not there."
    )
    word_rank: Rank = Field(
        default=None, description="1-based rank among the best by words; null if not there."
    )
    fact_rank: Rank = Field(
        default=None,
        description="1-based rank of its message among those the facts nearest the question "
        "cite; null if none does.",
    )
    topic_rank: Rank = Field(
        default=None,
        description="1-based rank among the nearest by vector to the question with the names "
        "it writes replaced by 'someone'; null if not there, or if the question writes no "
        "name (that ranking is then the first one, counted twice).",
    )
    message_share: Signal = Field(
        default=None,
        description="Share of its fused score kept for the passages of its own message ahead "
        "of it (0.5 per passage); null if none is.",
    )
    neighbour_share: Signal = Field(
        default=None,
        description="Share of its score (before the time factor) that the message stored "
        "just before its own gave it (0.3 x the best score among its passages); "
        "null if it gave nothing.",
    )
    time_factor: Signal = Field(
        default=None,
        description="Factor of the time the question asks about (month 3, day 4, a stated "
        "time for 'when' 2, multiplied); null if none applied.",
    )
    cited_share: Signal = Field(
        default=None,
        description="Share of its fused score kept because a fact in the bundle cites its "
        "message (0.25); null if none does.",
    )
    diversity_shift: int | None = Field(
        default=None,
        description="Places it moved when the first 20 passages of the ranking were "
        "reordered so that they say different things (positive: later; negative: earlier); "
        "null if it kept its place.",
    )


class RecalledFact(Fact):
    path: OmittableNames = Field(
        default=None,
        description="Hop-2 facts only: the names walked, from the matched name to the subject.",
    )
    why: FactWhy | SkipJsonSchema[None] = Field(
        default=None, description="With `explain: true` only."
    )


class Report(BaseModel):
    id: str
    title: str
    summary: str
    path: list[str]
    source_messages: list[str]


class RecalledReport(Report):
    why: ReportWhy | SkipJsonSchema[None] = Field(
        default=None, description="With `explain: true` only."
    )


class Passage(BaseModel):
    id: str
    message_id: str
    role: Role
    source: str | None
    start: int = Field(ge=0, description="Code-point offset into the message content.")
    end: int = Field(ge=0)
    quote: str


class RecalledPassage(Passage):
    occurred_at: str | None = Field(
        default=None,
        description="When its message occurred (RFC 3339, UTC); not counted against the "
        "budget. Null only if the message was removed during the recall.",
    )
    recorded_at: str | None = Field(
        default=None,
        description="When its message was stored (RFC 3339, UTC); not counted.",
    )
    why: PassageWhy | SkipJsonSchema[None] = Field(
        default=None, description="With `explain: true` only."
    )


class UsedControls(BaseModel):
    """The controls the recall actually used, defaults filled in."""

    max_characters: int = Field(gt=0)
    max_rows: int = Field(gt=0)
    source_roles: list[Role]
    hops: int = Field(ge=1, le=2)
    surfaces: list[Surface]
    themes: bool
    # explain and the filters are echoed only when sent.
    explain: Annotated[bool | None, WithJsonSchema({"type": "boolean"})] = None
    subjects: OmittableNames = None
    as_of: Annotated[str | None, WithJsonSchema({"type": "string", "format": "date-time"})] = None
    recorded_after: Annotated[
        str | None, WithJsonSchema({"type": "string", "format": "date-time"})
    ] = None
    recorded_before: Annotated[
        str | None, WithJsonSchema({"type": "string", "format": "date-time"})
    ] = None


class Recall(BaseModel):
    controls: UsedControls
    characters: int = Field(ge=0, description="Code points counted against the budget.")
    truncated: bool
    degraded: list[Surface] = Field(description="Surfaces in effect that could not run.")
    facts: list[RecalledFact]
    reports: list[RecalledReport]
    passages: list[RecalledPassage]
    user: str | None = Field(
        default=None, description="The end user the recall was for: present when sent."
    )


class ErasedCounts(BaseModel):
    facts: int = Field(ge=0)
    entities: int = Field(ge=0)
    messages: int = Field(ge=0)
    passages: int = Field(ge=0)
    reports: int = Field(ge=0)


class ErasureAnswer(BaseModel):
    id: str = Field(description="The erasure's id (era_ and 32 hex digits).")
    status: Literal["pending", "done"] = Field(
        description="done: everything is erased; pending: the worker is erasing it (recall "
        "already returns nothing that names it)."
    )
    status_url: str = Field(description="Where GET reads this erasure's status.")
    erased: ErasedCounts = Field(
        description="What was removed (so far, while pending); zeros when nothing was held."
    )
    requested_at: str | None = None
    finished_at: str | None = Field(default=None, description="Present once done.")


class PreviewName(BaseModel):
    key: str = Field(description="A normalised name the subject reaches.")
    taken: bool = Field(
        description="true: erased (the subject, its entity and aliases, names in `also`); "
        "false: an entity whose name holds the subject, left unless named in `also`."
    )


class ErasurePreview(BaseModel):
    dry_run: Literal[True] = True
    names: list[PreviewName]
    would_erase: ErasedCounts = Field(
        description="What the erasure would remove now (reports: rebuilt, not counted)."
    )
    facts: list[Fact] = Field(description="The first facts it would delete (at most 5).")
    passages: list[Passage] = Field(
        description="The first passages it would delete and mask (at most 5)."
    )
    messages: int = Field(ge=0, description="The messages the project (scope) holds.")
    needs_token: bool = Field(
        description="true: the subject is no entity and would mask more than a small share "
        "of the messages; the erasure request must carry `token`."
    )
    token: str = Field(description="Send it with the erasure of this subject and `also`.")


class ErasureOrPreview(RootModel[ErasureAnswer | ErasurePreview]):
    """The erasure's status, or with "dry_run": true its preview."""


class Merged(BaseModel):
    alias: str
    into: str
    facts_moved: int = Field(ge=0)
    aliases_moved: int = Field(ge=0)


class AliasEntry(BaseModel):
    alias: str
    into: str


class Aliases(BaseModel):
    aliases: list[AliasEntry] = Field(description="By normalised alias.")
    next_cursor: str | None = Field(
        description="Pass as cursor for the next page; null at the end."
    )


class Proposal(BaseModel):
    alias: str
    into: str
    similarity: float


class Proposals(BaseModel):
    threshold: float
    proposals: list[Proposal]
    degraded: list[Literal["proposals"]]


class EntityFacts(BaseModel):
    user: int = Field(ge=0)
    assistant: int = Field(ge=0)
    system: int = Field(ge=0)
    tool: int = Field(ge=0)


class EntityEntry(BaseModel):
    key: str = Field(description="The normalised name: what names are matched on.")
    name: str = Field(description="The name as first written.")
    facts: EntityFacts = Field(description="Live facts naming the entity, per role.")


class EntityList(BaseModel):
    entities: list[EntityEntry] = Field(description="By key.")
    next_cursor: str | None = Field(
        description="Pass as cursor for the next page; null at the end."
    )


class Node(BaseModel):
    id: str = Field(description='"e:<key>" for an entity, "v:<fact id>" for a value.')
    key: str | None
    name: str
    kind: Literal["entity", "value"]
    hop: int = Field(ge=0, le=2)


class Edge(BaseModel):
    id: str = Field(description="The fact's id.")
    source: str
    target: str
    predicate: str
    statement: str
    source_role: Role
    valid_to: Moment | None
    hop: int = Field(ge=1, le=2)


class Neighbourhood(BaseModel):
    entity: str = Field(description="The key the name resolved to (an alias: its entity).")
    nodes: list[Node]
    edges: list[Edge]


class StoredMessage(BaseModel):
    id: str
    role: Role
    content: str
    source: str | None
    occurred_at: Moment
    recorded_at: Moment


class ListedMessage(StoredMessage):
    passages: list[Passage] | SkipJsonSchema[None] = Field(
        default=None, description="With `passages=true` only: its passages, in order of start."
    )


class MessageList(BaseModel):
    messages: list[ListedMessage] = Field(description="Newest first (recorded_at, then id).")
    next_cursor: str | None = Field(
        description="Pass as cursor for the next page; null at the end."
    )


class SearchedFacts(BaseModel):
    facts: list[Fact] = Field(description="Best match first (BM25 over the fact's words).")
    next_cursor: str | None = Field(
        description="Pass as cursor (with the same q and filters) for the next page; null "
        "at the end, or once the search has read its first 1,000 matches."
    )
    degraded: list[Literal["search"]] = Field(
        description='["search"] when the search could not run (no embedding model '
        "configured, or the index failed): the lists are then empty."
    )


class SearchedMessages(BaseModel):
    messages: list[ListedMessage] = Field(
        description="Best match first, each with the passages that matched (by start)."
    )
    next_cursor: str | None = Field(
        description="Pass as cursor (with the same q and filters) for the next page; null "
        "at the end, or once the search has read its first 1,000 matching passages."
    )
    degraded: list[Literal["search"]] = Field(
        description='["search"] when the search could not run: the lists are then empty.'
    )


class MessageWithPassages(BaseModel):
    message: StoredMessage
    passages: list[Passage] = Field(description="In order of start.")


class ListedCredential(BaseModel):
    id: str
    kind: Literal["project", "user", "admin"] = Field(
        description="project: may send any user; user: acts only as its user; "
        "admin: may also mint and revoke credentials."
    )
    user: OmittableText = Field(default=None, description="A user credential's end user only.")
    label: OmittableText = Field(default=None, description="Only where one was given.")
    created_at: Moment
    last_used_at: Moment | None = Field(
        description="When it last authorized a request, to within a minute (on AWS, "
        "within the authorizer's 5-minute cache); null if never."
    )
    revoked_at: OmittableText = Field(
        default=None,
        description="Revoked credentials only.",
        json_schema_extra={"format": "date-time"},
    )


class MintedCredential(BaseModel):
    id: str
    kind: Literal["project", "user"]
    user: OmittableText = Field(default=None, description="A user credential's end user only.")
    label: OmittableText = Field(default=None, description="Only where one was given.")
    created_at: Moment
    secret: str = Field(
        description="The bearer credential, shown this once: only its hash is kept."
    )


class CredentialList(BaseModel):
    credentials: list[ListedCredential] = Field(description="By id, revoked ones too.")
    next_cursor: str | None = Field(
        description="Pass as cursor for the next page; null at the end."
    )


class Health(BaseModel):
    status: Literal["ok"]


class Status(BaseModel):
    version: str
    store: str
    embeddings: str
    bundle_characters: int = Field(gt=0)
    max_rows: int = Field(gt=0)
    work_pending: bool = Field(
        description="True while the worker has work for the caller's project (reports, "
        "vectors, extractions or erasures to finish after writes)."
    )


ERROR_SCHEMA = {"$ref": "#/components/schemas/ErrorBody"}


def error_response(description: str) -> dict[str, Any]:
    """One documented error status: its codes in words, and the one error shape."""
    return {"description": description, "content": {"application/json": {"schema": ERROR_SCHEMA}}}


def described(
    status: int,
    body: type[BaseModel] | dict[str, Any] | None,
    description: str,
    *,
    not_found: bool = False,
) -> dict[int, Any]:
    """A route's `responses=`: its success (a model, a JSON schema, or no body), and
    404 where an id in the path may name nothing.

    The errors every route can give (400, 413, 500, and 401 where the template asks
    for a credential) are added to each route when the document is built
    (taisce.api.openapi), so a route added without them is still described right.
    """
    content: dict[str, Any] = {}
    if isinstance(body, dict):
        content = {"application/json": {"schema": body}}
    elif body is not None:
        content = {"application/json": {"model": body}}
    responses: dict[int, Any] = {status: {"description": description, "content": content}}
    if not_found:
        responses[404] = error_response("not_found: no such id in the project")
    return responses
