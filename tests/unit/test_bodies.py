"""Every body api/bodies.py builds is what its model in api/responses.py states, key
for key and in the same order: the one description of each body (issue 14). The
recall's is written by hand for speed, so this is what holds it to its model; the
others are dumped from their models, and must come back unchanged too (nothing
retyped, such as an int in a float field). Keys that do not apply are absent."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import BaseModel

from taisce.api import bodies, responses
from taisce.domain.aliases import MergeProposals, Proposal
from taisce.domain.controls import Limits, RecallRequest, resolve
from taisce.domain.listing import (
    AliasPage,
    EntityPage,
    FactPage,
    MessagePage,
    ShownMessage,
    neighbourhood_graph,
)
from taisce.domain.model import (
    Alias,
    EntityCounts,
    ErasureStatus,
    MergeResult,
    Message,
    Passage,
    Report,
)
from taisce.domain.recalled import (
    FactWhy,
    PassageWhy,
    RecallAnswer,
    RecalledFact,
    RecalledPassage,
    RecalledReport,
    ReportWhy,
)
from tests.contract.factories import RECORDED_AT, fact

MAYA = fact("Maya", "works at", "Acme", message_id="m1", quote="at Acme", quote_start=3)
TEA = fact("Maya", "likes", "tea", kind="value", valid_from=RECORDED_AT)
ACME = fact("Acme", "is in", "Dublin", valid_to=RECORDED_AT)
MESSAGE = Message("m1", "user", "I work at Acme", "chat", RECORDED_AT, RECORDED_AT)
PASSAGE = Passage("p1", "m1", "user", None, 0, 14, "I work at Acme", RECORDED_AT, 7)
REPORT = Report("rep_1", "user", 0, None, "Maya", "Maya works at Acme", ("Maya",), ("m1",),
                ("acme", "maya"), "acme")  # fmt: skip


def _same(model: type[BaseModel], body: dict[str, Any]) -> None:
    """The body validates against the model, and the model gives it back unchanged
    (no key added, dropped, reordered or retyped)."""
    again = model.model_validate(body).model_dump(exclude_unset=True)
    assert json.dumps(again) == json.dumps(body)


def _answer(request: RecallRequest) -> RecallAnswer:
    controls = resolve(request, Limits())
    why = controls.explain
    return RecallAnswer(
        controls,
        120,
        True,
        ["passages"],
        [
            RecalledFact(
                MAYA, (), FactWhy("exact_name", "maya", 1, 0.5, 0.81234, 0.7) if why else None
            ),
            RecalledFact(
                ACME,
                ("Maya", "Acme"),
                FactWhy(
                    "similar_name", "maya", 2, 0.25, None, 0.3, True, 0.456789, (), "Mayas", "case"
                )
                if why
                else None,
            ),
            RecalledFact(
                TEA, (), FactWhy("exact_name", "maya", 1, 0.0, 0.1, 0.2, True) if why else None
            ),
        ],
        [RecalledReport(REPORT, ReportWhy("maya", 0.5, None, 0.25) if why else None)],
        [
            RecalledPassage(PASSAGE, PassageWhy(1, None, 2, 3, 0.5, None, 3.0) if why else None),
            RecalledPassage(
                PASSAGE, PassageWhy(None, 4, None, None, None, 0.12345, None) if why else None
            ),
        ],
    )


@pytest.mark.parametrize(
    "request_",
    [
        RecallRequest(question="q"),
        RecallRequest(question="q", explain=True, hops=2, themes=True),
        RecallRequest(
            question="q",
            explain=False,
            subjects=["Maya"],
            as_of="2026-01-01T00:00:00Z",
            recorded_after="2025-01-01T00:00:00Z",
            recorded_before="2026-06-01T00:00:00Z",
        ),
    ],
)
def test_the_recall_body_is_its_model(request_: RecallRequest) -> None:
    body = bodies.recall(_answer(request_))
    _same(responses.Recall, body)
    # Keys that do not apply are absent, never null.
    assert "path" not in body["facts"][0] and body["facts"][1]["path"] == ["Maya", "Acme"]
    if not request_.explain:
        assert all("why" not in i for k in ("facts", "reports", "passages") for i in body[k])
    else:
        assert "path" not in body["facts"][0]["why"]
        assert body["facts"][1]["why"]["neutral_similarity"] == 0.4568
        assert "neutral_similarity" not in body["facts"][2]["why"]
        # Step 2 says which words of the question found the name, and how.
        assert body["facts"][1]["why"]["asked_as"] == "Mayas"
        assert body["facts"][1]["why"]["signal"] == "case"
        assert "asked as 'Mayas' (a case form)" in body["facts"][1]["why"]["reason"]
        assert "asked_as" not in body["facts"][0]["why"]


def test_every_other_body_is_its_model() -> None:
    page = EntityPage([EntityCounts("maya", "Maya", {"user": 2, "tool": 1})], "next")
    _same(responses.EntityList, bodies.entity_list(page))
    shown = ShownMessage(MESSAGE, [PASSAGE])
    _same(
        responses.MessageList,
        bodies.message_list(MessagePage([shown, ShownMessage(MESSAGE)], None)),
    )
    _same(responses.MessageWithPassages, bodies.message_with_passages(shown))
    graph = neighbourhood_graph("maya", [(MAYA, 1), (TEA, 1), (ACME, 2)])
    _same(responses.Neighbourhood, bodies.neighbourhood(graph))
    _same(responses.Facts, bodies.facts(FactPage([MAYA, TEA], None)))
    _same(responses.Merged, bodies.merged(MergeResult("Bob", "Robert", 3, 1)))
    _same(
        responses.Aliases,
        bodies.aliases(AliasPage([Alias("Bob", "bob", "Robert", "robert")], "next")),
    )
    proposals = MergeProposals(0.85, [Proposal("Bob", "Robert", 0.9123)], [])
    _same(responses.Proposals, bodies.proposals(proposals))
    _same(responses.StoredFacts, bodies.stored_facts(["f1", "f2"]))
    _same(responses.StoredMessages, bodies.stored_messages(["m1"]))
    counts = {"facts": 2, "entities": 1, "messages": 0, "passages": 3, "reports": 1}
    pending = bodies.erasure(ErasureStatus("era_" + "0" * 32, "pending", counts, RECORDED_AT))
    _same(responses.ErasureAnswer, pending)
    assert "finished_at" not in pending
    done = ErasureStatus("era_" + "0" * 32, "done", counts, RECORDED_AT, RECORDED_AT)
    _same(responses.ErasureAnswer, bodies.erasure(done))
