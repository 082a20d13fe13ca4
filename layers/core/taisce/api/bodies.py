"""The bodies the API answers with, built from the domain's records.

Each body is built through its model in api/responses.py (validated, then dumped), so
the shape the OpenAPI document states is the shape sent: one description of each body.
A key the server leaves out when it does not apply is left out of the model's input
and dumped `exclude_unset`: absent, never null. The bodies of the hot paths (a recall,
the ids of a storing request) are written by hand, for speed (see below), and held to
their models by tests/unit/test_bodies.py.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel

from ..domain.aliases import MergeProposals
from ..domain.controls import FILTERS, RecallControls
from ..domain.credential_requests import CredentialPage
from ..domain.erasure_preview import ErasurePreview
from ..domain.listing import (
    AliasPage,
    EntityPage,
    FactPage,
    MessagePage,
    Neighbourhood,
    ShownMessage,
)
from ..domain.model import (
    COUNTS,
    ROLES,
    Credential,
    ErasureStatus,
    Fact,
    MergeResult,
    Message,
    Passage,
    Report,
)
from ..domain.reasons import fact_reason, passage_reason, report_reason
from ..domain.recalled import (
    FactWhy,
    RecallAnswer,
    RecalledFact,
    RecalledPassage,
    RecalledReport,
    ReportWhy,
)
from ..domain.search import FactMatches, MessageMatches
from . import responses

Body = dict[str, Any]


def _through(model: type[BaseModel], data: object) -> Body:
    """`data` as `model` states it: validated (from a mapping, or from a record's
    attributes), then dumped with only the keys that were given."""
    return model.model_validate(data, from_attributes=True).model_dump(exclude_unset=True)


def _message_fields(m: Message) -> Body:
    return {
        "id": m.id,
        "role": m.role,
        "content": m.content,
        "source": m.source,
        "occurred_at": m.occurred_at,
        "recorded_at": m.recorded_at,
    }


def _passage_fields(p: Passage) -> Body:
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
# By hand, as the recall's: storing is the hot write path (docs/measured-choices.md).
# Held to their models by tests/unit/test_bodies.py.


def stored_facts(ids: Sequence[str]) -> Body:
    return {"facts": [{"id": i} for i in ids]}


def stored_messages(ids: Sequence[str]) -> Body:
    return {"messages": [{"id": i} for i in ids]}


# -- facts and listings ----------------------------------------------------------------


def fact(f: Fact) -> Body:
    """A fact as the API returns it (its keys are not part of the body)."""
    return _through(responses.Fact, f)


def passage(p: Passage) -> Body:
    return _through(responses.Passage, _passage_fields(p))


def report(r: Report) -> Body:
    return _through(responses.Report, _report_fields(r))


def facts(page: FactPage) -> Body:
    return _through(responses.Facts, {"facts": page.facts, "next_cursor": page.next_cursor})


def entity_list(page: EntityPage) -> Body:
    entities = [
        {"key": e.key, "name": e.name, "facts": {r: e.counts.get(r, 0) for r in ROLES}}
        for e in page.entities
    ]
    return _through(responses.EntityList, {"entities": entities, "next_cursor": page.next_cursor})


def _listed(shown: ShownMessage) -> Body:
    item = _message_fields(shown.message)
    if shown.passages is not None:
        item["passages"] = [_passage_fields(p) for p in shown.passages]
    return item


def message_list(page: MessagePage) -> Body:
    messages = [_listed(m) for m in page.messages]
    return _through(responses.MessageList, {"messages": messages, "next_cursor": page.next_cursor})


def searched_facts(found: FactMatches) -> Body:
    return _through(
        responses.SearchedFacts,
        {"facts": found.facts, "next_cursor": found.next_cursor, "degraded": found.degraded},
    )


def searched_messages(found: MessageMatches) -> Body:
    messages = [_listed(m) for m in found.messages]
    return _through(
        responses.SearchedMessages,
        {"messages": messages, "next_cursor": found.next_cursor, "degraded": found.degraded},
    )


def message_with_passages(shown: ShownMessage) -> Body:
    passages = [_passage_fields(p) for p in shown.passages or ()]
    return _through(
        responses.MessageWithPassages,
        {"message": _message_fields(shown.message), "passages": passages},
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


def aliases(page: AliasPage) -> Body:
    return _through(responses.Aliases, {"aliases": page.aliases, "next_cursor": page.next_cursor})


def proposals(found: MergeProposals) -> Body:
    return _through(responses.Proposals, found)


# -- erasure -------------------------------------------------------------------------------


def erasure(status: ErasureStatus, user: str | None = None) -> Body:
    """An erasure's status; requested_at and finished_at only where known. A user's
    erasure is read back with its user (it is recorded in that user's scope)."""
    url = f"/v1/erasures/{status.id}" + ("" if user is None else f"?user={user}")
    body: Body = {
        "id": status.id,
        "status": status.status,
        "status_url": url,
        "erased": {k: status.counts.get(k, 0) for k in COUNTS},
    }
    if status.requested_at is not None:
        body["requested_at"] = status.requested_at
    if status.finished_at is not None:
        body["finished_at"] = status.finished_at
    return _through(responses.ErasureAnswer, body)


def erasure_preview(preview: ErasurePreview) -> Body:
    """What an erasure would take (`dry_run`), nothing removed."""
    reach = preview.reach
    names = [{"key": k, "taken": True} for k in reach.names]
    names += [{"key": k, "taken": False} for k in reach.spared]
    body = {
        "dry_run": True,
        "names": names,
        "would_erase": {**preview.counts, "reports": 0},
        "facts": [fact(f) for f in preview.facts],
        "passages": [passage(p) for p in preview.passages],
        "messages": preview.messages,
        "needs_token": reach.needs_token,
        "token": preview.token,
    }
    return _through(responses.ErasurePreview, body)


# -- recall ------------------------------------------------------------------------------
# Written by hand, not validated through the models: the recall body is built on the
# recall's hot path, where the model's validation cost more than the 2% allowed
# (docs/measured-choices.md). tests/unit/test_bodies.py checks that these bodies are
# what the Recall model states, key for key, so the models stay the one description.


def used_controls(controls: RecallControls) -> Body:
    """The controls a recall used; explain and the filters only when sent, so the echo
    otherwise keeps its six keys."""
    body: Body = {
        "max_characters": controls.max_characters,
        "max_rows": controls.max_rows,
        "source_roles": list(controls.source_roles),
        "hops": controls.hops,
        "surfaces": list(controls.surfaces),
        "themes": controls.themes,
    }
    if controls.explain is not None:
        body["explain"] = controls.explain
    for name in FILTERS:
        value = getattr(controls, name)
        if value is not None:
            body[name] = list(value) if isinstance(value, tuple) else value
    return body


def _signal(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def _fact_why(why: FactWhy) -> Body:
    body: Body = {
        "step": why.step,
        "reason": fact_reason(why),
        "matched": why.matched,
        "hop": why.hop,
        "words": round(why.words, 4),
        "similarity": _signal(why.similarity),
        "score": round(why.score, 4),
    }
    if why.path:
        body["path"] = True
        if why.hop == 2:
            body["neutral_similarity"] = _signal(why.neutral_similarity)
    if why.asked_as is not None:
        body["asked_as"] = why.asked_as
        body["signal"] = why.signal
    return body


def _fact_fields(f: Fact) -> Body:
    return {
        "id": f.id,
        "subject": f.subject,
        "predicate": f.predicate,
        "object": f.object,
        "object_kind": f.object_kind,
        "statement": f.statement,
        "source_role": f.source_role,
        "quote": f.quote,
        "context": f.context,
        "message_id": f.message_id,
        "valid_from": f.valid_from,
        "valid_to": f.valid_to,
        "recorded_at": f.recorded_at,
        "quote_start": f.quote_start,
        "quote_end": f.quote_end,
    }


def recalled_fact(item: RecalledFact) -> Body:
    body = _fact_fields(item.fact)
    if item.path:
        body["path"] = list(item.path)
    if item.why is not None:
        body["why"] = _fact_why(item.why)
    return body


def _report_fields(r: Report) -> Body:
    return {
        "id": r.id,
        "title": r.title,
        "summary": r.summary,
        "path": list(r.path),
        "source_messages": list(r.source_messages),
    }


def report_why(why: ReportWhy) -> Body:
    return {
        "step": "report",
        "reason": report_reason(why),
        "matched": why.matched,
        "words": round(why.words, 4),
        "similarity": _signal(why.similarity),
        "score": round(why.score, 4),
    }


def recalled_report(item: RecalledReport) -> Body:
    body = _report_fields(item.report)
    if item.why is not None:
        body["why"] = report_why(item.why)
    return body


def recalled_passage(item: RecalledPassage) -> Body:
    body = _passage_fields(item.passage)
    # Its message's times (not counted against the budget, like ids).
    body["occurred_at"] = item.passage.occurred_at
    body["recorded_at"] = item.passage.recorded_at
    if (why := item.why) is not None:
        body["why"] = {
            "step": "passage",
            "reason": passage_reason(why),
            "matched": None,
            "vector_rank": why.vector_rank,
            "word_rank": why.word_rank,
            "fact_rank": why.fact_rank,
            "topic_rank": why.topic_rank,
            "message_share": _signal(why.message_share),
            "neighbour_share": _signal(why.neighbour_share),
            "time_factor": _signal(why.time_factor),
            "cited_share": _signal(why.cited_share),
            "diversity_shift": why.diversity_shift,
        }
    return body


def recall(answer: RecallAnswer, user: str | None = None) -> Body:
    body: Body = {
        "controls": used_controls(answer.controls),
        "characters": answer.characters,
        "truncated": answer.truncated,
        "degraded": list(answer.degraded),
        "facts": [recalled_fact(i) for i in answer.facts],
        "reports": [recalled_report(i) for i in answer.reports],
        "passages": [recalled_passage(i) for i in answer.passages],
    }
    if user is not None:
        body["user"] = user
    return body


# -- credentials -------------------------------------------------------------------------


def _credential_fields(c: Credential) -> Body:
    fields: Body = {"id": c.id, "kind": c.kind, "created_at": c.created_at}
    for name in ("user", "label", "revoked_at"):
        if getattr(c, name) is not None:
            fields[name] = getattr(c, name)
    return fields


def minted_credential(credential: Credential, secret: str) -> Body:
    return _through(
        responses.MintedCredential, {**_credential_fields(credential), "secret": secret}
    )


def credential_list(page: CredentialPage) -> Body:
    listed = [{**_credential_fields(c), "last_used_at": c.last_used_at} for c in page.credentials]
    return _through(
        responses.CredentialList, {"credentials": listed, "next_cursor": page.next_cursor}
    )
