"""The bodies the API answers with, built from the domain's records.

Each body is built through its model in api/responses.py (validated, then dumped), so
the shape the OpenAPI document states is the shape sent: one description of each body.
A key the server leaves out when it does not apply is left out of the model's input
and dumped `exclude_unset`: absent, never null.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel

from ..domain.aliases import Alias, MergeProposals, MergeResult
from ..domain.erasure import COUNTS, ErasureStatus
from ..domain.listing import EntityPage, MessagePage, Neighbourhood, ShownMessage
from ..domain.model import ROLES, Fact, Message, Passage
from . import responses

Body = dict[str, Any]


def _through(model: type[BaseModel], data: object) -> Body:
    """`data` as `model` states it: validated (from a mapping, or from a record's
    attributes), then dumped with only the keys that were given."""
    return model.model_validate(data, from_attributes=True).model_dump(exclude_unset=True)


def _message(m: Message) -> Body:
    return {
        "id": m.id,
        "role": m.role,
        "content": m.content,
        "source": m.source,
        "occurred_at": m.occurred_at,
        "recorded_at": m.recorded_at,
    }


def _passage(p: Passage) -> Body:
    return {
        "id": p.id,
        "message_id": p.message_id,
        "role": p.role,
        "source": p.source,
        "start": p.start,
        "end": p.end,
        "quote": p.quote,
    }


# -- storing -------------------------------------------------------------------------


def stored_facts(ids: Sequence[str]) -> Body:
    return _through(responses.StoredFacts, {"facts": [{"id": i} for i in ids]})


def stored_messages(ids: Sequence[str]) -> Body:
    return _through(responses.StoredMessages, {"messages": [{"id": i} for i in ids]})


# -- facts and listings ----------------------------------------------------------------


def fact(f: Fact) -> Body:
    """A fact as the API returns it (its keys are not part of the body)."""
    return _through(responses.Fact, f)


def facts(found: Sequence[Fact]) -> Body:
    return _through(responses.Facts, {"facts": found})


def entity_list(page: EntityPage) -> Body:
    entities = [
        {"key": e.key, "name": e.name, "facts": {r: e.counts.get(r, 0) for r in ROLES}}
        for e in page.entities
    ]
    return _through(responses.EntityList, {"entities": entities, "next_cursor": page.next_cursor})


def _listed(shown: ShownMessage) -> Body:
    item = _message(shown.message)
    if shown.passages is not None:
        item["passages"] = [_passage(p) for p in shown.passages]
    return item


def message_list(page: MessagePage) -> Body:
    messages = [_listed(m) for m in page.messages]
    return _through(responses.MessageList, {"messages": messages, "next_cursor": page.next_cursor})


def message_with_passages(shown: ShownMessage) -> Body:
    passages = [_passage(p) for p in shown.passages or ()]
    return _through(
        responses.MessageWithPassages, {"message": _message(shown.message), "passages": passages}
    )


def neighbourhood(graph: Neighbourhood) -> Body:
    edges = [
        {
            "id": e.fact.id,
            "source": e.source,
            "target": e.target,
            "predicate": e.fact.predicate,
            "statement": e.fact.statement,
            "source_role": e.fact.source_role,
            "valid_to": e.fact.valid_to,
            "hop": e.hop,
        }
        for e in graph.edges
    ]
    return _through(
        responses.Neighbourhood, {"entity": graph.entity, "nodes": graph.nodes, "edges": edges}
    )


# -- entities and aliases ----------------------------------------------------------------


def merged(result: MergeResult) -> Body:
    return _through(responses.Merged, result)


def aliases(found: Sequence[Alias]) -> Body:
    return _through(responses.Aliases, {"aliases": found})


def proposals(found: MergeProposals) -> Body:
    return _through(responses.Proposals, found)


# -- erasure -------------------------------------------------------------------------------


def erasure(status: ErasureStatus) -> Body:
    """An erasure's status; requested_at and finished_at only where known."""
    body: Body = {
        "id": status.id,
        "status": status.status,
        "status_url": f"/v1/erasures/{status.id}",
        "erased": {k: status.counts.get(k, 0) for k in COUNTS},
    }
    if status.requested_at is not None:
        body["requested_at"] = status.requested_at
    if status.finished_at is not None:
        body["finished_at"] = status.finished_at
    return _through(responses.ErasureAnswer, body)
