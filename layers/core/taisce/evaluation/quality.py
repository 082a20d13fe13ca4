"""The retrieval-quality harness: evidence recall of Taisce and of baselines.

For each conversation of a dataset (docs/quality.md, "Dataset format"), in a fresh project of
an in-process local gateway (the Lambda authorizer, then the Powertools handlers, as
`taisce serve` runs them) on a temporary data folder:

1. the messages are stored with `POST /v1/messages` (batches of up to 100), then the
   facts, if the conversation has any, with `POST /v1/facts`; then the work the API
   leaves to its queue (reports rebuilt after facts change) is run to the end, as the
   local server's worker would run it shortly after the writes;
2. each question is recalled once per budget: `max_characters` = the budget,
   `source_roles` all four roles, `hops` 2, the default surfaces;
3. the baselines of `baselines.py` rank the same stored texts, as whole messages and as
   the passages Taisce splits them into, and are packed into the same budgets.

A question's evidence is covered by a Taisce bundle when the bundle holds a passage of
an evidence message, a fact whose `message_id` is one, or a report whose
`source_messages` include one; by a baseline when it packed an evidence message or a passage of one.
"Any" counts questions with at least one evidence message covered, "all" those with
every one covered. Questions with no evidence (no answer in the conversation) are
reported apart, with the characters each method returned.
"""

from __future__ import annotations

import json
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from .baselines import (
    EmbeddingCache,
    Rankers,
    Units,
    message_units,
    pack,
    passage_units,
    recency_order,
)
from .dataset import (
    Conversation,
    Dataset,
    SpeakerMode,
    stored_facts,
    stored_messages,
)
from .figures import TAISCE, summarise
from .harness import (
    HarnessError,
    Session,
    embed_question,
    embedded_run,
    make_local_embedder,
    message_payload,
    settler,
    store_items,
)
from .machine import describe_machine

ROLES = ("user", "assistant", "system", "tool")
DEFAULT_BUDGETS = (1_000, 4_000, 16_000)
HOPS = 2
BASELINES = ("bm25", "dense", "hybrid", "recency")
# The same rankings over the passages Taisce packs (a method's name + this suffix).
PASSAGES = "-passages"

SPEAKER_NOTES = {
    "both": 'the speaker is stored twice: as a content prefix ("Speaker: text") and in '
    'the source ("<source>/<Speaker>", or the speaker alone when there is no source)',
    "prefix": 'the speaker is stored as a content prefix ("Speaker: text")',
    "source": 'the speaker is stored in the source ("<source>/<Speaker>")',
}


@dataclass
class Options:
    budgets: Sequence[int] = DEFAULT_BUDGETS
    embeddings: str = "none"
    speaker: SpeakerMode = "both"
    limit_conversations: int | None = None
    template: Path | None = None
    # The embedder of the dense and hybrid baselines. None: Taisce's own for
    # `embeddings` (none: those baselines are skipped). Tests pass a stand-in.
    embedder: Any | None = None
    log: Callable[[str], None] = field(default=lambda text: print(text, file=sys.stderr))


# -- one conversation ---------------------------------------------------------------


def _outcome(evidence: Sequence[str], covered: set[str], characters: int, ms: float) -> dict:
    hits = sum(1 for e in evidence if e in covered)
    return {
        "any": hits > 0,
        "all": bool(evidence) and hits == len(evidence),
        "characters": characters,
        "ms": round(ms, 3),
    }


def _bundle_messages(answer: dict[str, Any]) -> set[str]:
    ids: set[str] = set()
    for item in answer.get("passages") or ():
        if item.get("message_id"):
            ids.add(item["message_id"])
    for item in answer.get("facts") or ():
        if item.get("message_id"):
            ids.add(item["message_id"])
    for item in answer.get("reports") or ():
        ids.update(m for m in item.get("source_messages") or () if m)
    return ids


def _reports_without_evidence(
    answer: dict[str, Any], evidence: Sequence[str], by_server_id: dict[str, str]
) -> int:
    """Characters the bundle spent on reports citing none of the question's evidence
    messages (every report, for a question without evidence), by the API's rule."""
    from taisce.domain.budget import item_characters

    wanted = set(evidence)
    return sum(
        item_characters("reports", report)
        for report in answer.get("reports") or ()
        if not wanted & {by_server_id.get(m, m) for m in report.get("source_messages") or ()}
    )


@dataclass
class _Run:
    """State shared by the conversations of one run."""

    session: Session
    options: Options
    max_rows: int
    embedder: Any | None
    cache: EmbeddingCache | None
    methods: tuple[str, ...]
    notes: list[str] = field(default_factory=list)
    totals: Counter[str] = field(default_factory=Counter)


@dataclass(frozen=True)
class _Baselines:
    """The baselines' rankers of one conversation, built once: by the suffix of their
    methods' names ("" over whole messages, PASSAGES over passages)."""

    rankers: dict[str, Rankers]
    whole: Units
    recent: list[int]


def _run_conversation(run: _Run, index: int, conversation: Conversation) -> list[dict[str, Any]]:
    client = run.session.client(f"quality-{index}")
    messages, by_server_id = _store(run, client, conversation)
    # Work the API leaves to the ingestion queue (reports rebuilt after facts change) is
    # done now, as the local server's worker would do it shortly after the writes.
    if run.session.settle is not None:
        started = time.perf_counter()
        run.session.settle()
        run.totals["settle_seconds"] += time.perf_counter() - started
    baselines = _baselines(run, messages)
    records: list[dict[str, Any]] = []
    for question in conversation.questions:
        evidence = list(question.evidence)
        results: dict[str, dict[str, Any]] = {m: {} for m in run.methods}
        for budget in run.options.budgets:
            results[TAISCE][str(budget)] = _taisce_outcome(
                run, client, question.question, budget, evidence, by_server_id
            )
        _baseline_outcomes(run, baselines, messages, question.question, evidence, results)
        records.append(
            {
                "conversation": conversation.id,
                "id": question.id,
                "question": question.question,
                "category": question.category,
                "evidence": evidence,
                "results": results,
            }
        )
    return records


def _store(run: _Run, client: Any, conversation: Conversation) -> tuple[list[Any], dict[str, str]]:
    """The conversation's messages stored (and its facts, if it has any): the messages
    the API kept, and each kept message's dataset id by its server id."""
    messages, notes = stored_messages(conversation, run.options.speaker)
    run.notes.extend(f"conversation {conversation.id}: {n}" for n in notes)

    started = time.perf_counter()
    ids, refused = store_items(client, "messages", message_payload(messages))
    if refused:
        run.notes.append(f"conversation {conversation.id}: {refused} message(s) refused by the API")
    kept = [(m, i) for m, i in zip(messages, ids, strict=True) if i is not None]
    messages = [m for m, _ in kept]
    by_server_id = {server_id: m.dataset_id for m, server_id in kept}
    run.totals["messages"] += len(messages)
    run.totals["store_messages_seconds"] += time.perf_counter() - started

    if conversation.facts:
        started = time.perf_counter()
        fact_notes: list[str] = []
        facts = stored_facts(conversation.facts, messages, fact_notes)
        run.notes.extend(f"conversation {conversation.id}: {n}" for n in fact_notes)
        _, refused = store_items(client, "facts", facts)
        if refused:
            run.notes.append(f"conversation {conversation.id}: {refused} fact(s) refused")
        run.totals["facts"] += len(facts) - refused
        run.totals["conversations_with_facts"] += 1
        run.totals["store_facts_seconds"] += time.perf_counter() - started
    return messages, by_server_id


def _baselines(run: _Run, messages: Sequence[Any]) -> _Baselines:
    started = time.perf_counter()
    embed = embed_question(run.embedder) if run.embedder is not None else None
    whole = message_units(messages)
    rankers = {
        "": Rankers.build(whole, run.cache, embed),
        PASSAGES: Rankers.build(passage_units(messages), run.cache, embed),
    }
    recent = recency_order(messages)
    run.totals["baseline_index_seconds"] += time.perf_counter() - started
    return _Baselines(rankers, whole, recent)


def _taisce_outcome(
    run: _Run,
    client: Any,
    question: str,
    budget: int,
    evidence: list[str],
    by_server_id: dict[str, str],
) -> dict[str, Any]:
    """One recall through the API at one budget, scored against the evidence."""
    request = {
        "question": question,
        "max_characters": budget,
        "source_roles": list(ROLES),
        "hops": HOPS,
    }
    status, answer, seconds = client.post("/v1/recalls", request)
    if status != 200:
        run.totals["taisce_errors"] += 1
        outcome = _outcome(evidence, set(), 0, seconds * 1000)
        outcome["error"] = f"{status} {json.dumps(answer)[:200]}"
        return outcome
    covered = {by_server_id.get(i, i) for i in _bundle_messages(answer)}
    outcome = _outcome(evidence, covered, answer["characters"], seconds * 1000)
    outcome["items"] = [len(answer.get(k) or ()) for k in ("facts", "reports", "passages")]
    outcome["reports_without_evidence"] = _reports_without_evidence(answer, evidence, by_server_id)
    outcome["truncated"] = bool(answer.get("truncated"))
    outcome["degraded"] = list(answer.get("degraded") or ())
    return outcome


def _baseline_outcomes(
    run: _Run,
    baselines: _Baselines,
    messages: Sequence[Any],
    question: str,
    evidence: list[str],
    results: dict[str, dict[str, Any]],
) -> None:
    """Each baseline's ranking of the question, packed at each budget and scored."""
    for suffix, rankers in baselines.rankers.items():
        for name, ranked in rankers.rankings(question).items():
            results[name + suffix] = _packed(run, ranked, rankers.units, messages, evidence)
    results["recency"] = _packed(run, (baselines.recent, 0.0), baselines.whole, messages, evidence)


def _packed(
    run: _Run,
    ranked: tuple[list[int], float],
    units: Units,
    messages: Sequence[Any],
    evidence: list[str],
) -> dict[str, dict[str, Any]]:
    """A ranking (and the seconds it took) packed at each budget, scored by the
    messages its units are from."""
    ranking, ranked_in = ranked
    outcomes: dict[str, dict[str, Any]] = {}
    for budget in run.options.budgets:
        started = time.perf_counter()
        taken, used = pack(ranking, units.sizes, budget, run.max_rows)
        seconds = ranked_in + time.perf_counter() - started
        covered = {messages[units.owners[i]].dataset_id for i in taken}
        outcomes[str(budget)] = _outcome(evidence, covered, used, seconds * 1000)
    return outcomes


def _methods(options: Options, notes: list[str]) -> tuple[Any | None, tuple[str, ...]]:
    """The embedder of the run (loaded and warmed) and the methods it compares; what
    the run leaves out is noted."""
    embedder = options.embedder
    if embedder is None and options.embeddings != "none":
        embedder = make_local_embedder(options.embeddings)
        if embedder is None:
            raise HarnessError(f"--embeddings {options.embeddings}: Taisce has no such model")
    if embedder is None:
        notes.append(
            "embeddings none: Taisce runs step 1 only, and the dense and hybrid "
            "baselines are skipped (they need the embedder)"
        )
        return None, (TAISCE, "bm25", "recency", "bm25" + PASSAGES)
    embedder.embed(["warm-up"])  # the model loads here, not in the first timing
    if options.embeddings == "none":
        notes.append(
            "embeddings none: Taisce runs step 1 only; the dense and hybrid baselines "
            f"use the embedder given ({getattr(embedder, 'name', type(embedder).__name__)})"
        )
    over_passages = tuple(m + PASSAGES for m in BASELINES if m != "recency")
    return embedder, (TAISCE, *BASELINES, *over_passages)


def run_quality(dataset: Dataset, options: Options) -> dict[str, Any]:
    """Store, recall and score every conversation; the figures as one JSON-ready dict."""
    from taisce.api.wiring import services
    from taisce.local.gateway import Gateway
    from taisce.local.routes import find_template, read_api
    from taisce.settings import SettingsError

    budgets = sorted(set(options.budgets))
    if not budgets or budgets[0] < 1:
        raise HarnessError("budgets must be positive integers")
    options = replace(options, budgets=budgets)
    started = time.perf_counter()
    conversations = dataset.conversations
    if options.limit_conversations is not None:
        conversations = conversations[: options.limit_conversations]

    notes: list[str] = list(dataset.warnings)
    embedder, methods = _methods(options, notes)

    records: list[dict[str, Any]] = []
    with embedded_run("taisce-quality-", options.embeddings, budgets[-1]):
        try:
            built = services()
        except SettingsError as exc:
            raise HarnessError(f"Taisce refused the settings of this run: {exc}") from None
        gateway = Gateway(read_api(options.template or find_template()))
        gateway.warm()
        run = _Run(
            session=Session(gateway, built.credentials, settler(built.memory)),
            options=options,
            max_rows=built.settings.max_rows,
            embedder=embedder,
            cache=EmbeddingCache(embedder) if embedder is not None else None,
            methods=methods,
            notes=notes,
        )
        for n, conversation in enumerate(conversations, start=1):
            began = time.perf_counter()
            records.extend(_run_conversation(run, n, conversation))
            options.log(
                f"[{n}/{len(conversations)}] conversation {conversation.id}: "
                f"{len(conversation.messages)} messages, {len(conversation.questions)} "
                f"questions, {time.perf_counter() - began:.1f} s"
            )
        if run.cache is not None:
            run.totals["baseline_texts_embedded"] = run.cache.embedded
        settings = built.settings
        store = built.memory.store
        if hasattr(store, "close"):
            store.close()

    answerable = sum(1 for r in records if r["evidence"])
    totals = run.totals
    return {
        "dataset": {
            "name": dataset.name,
            "file": dataset.path,
            "conversations": len(conversations),
            "messages": int(totals["messages"]),
            "facts": int(totals["facts"]),
            "conversations_with_facts": int(totals["conversations_with_facts"]),
            "questions": len(records),
            "answerable": answerable,
            "no_answer": len(records) - answerable,
            "categories": dict(Counter(r["category"] for r in records if r["evidence"])),
        },
        "settings": {
            "budgets": budgets,
            "embeddings": options.embeddings,
            "store": settings.store,
            "max_rows": settings.max_rows,
            "recall": {"source_roles": list(ROLES), "hops": HOPS, "surfaces": "default"},
            "speaker": options.speaker,
            "speaker_storage": SPEAKER_NOTES[options.speaker],
            "methods": list(methods),
            "item_characters": "baselines count each whole message as Taisce counts a "
            "passage: role + source + text code points; those named -passages rank the "
            "passages Taisce splits each message into (the domain's splitter, 150 code "
            "points), counted by the same rule; whole units in ranked order until the "
            "first that does not fit or the row limit",
        },
        "notes": run.notes,
        **summarise(records, methods, budgets),
        "timings_seconds": {k: round(v, 3) for k, v in totals.items() if k.endswith("seconds")},
        "baseline_texts_embedded": int(totals["baseline_texts_embedded"]),
        "date": datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z"),
        "machine": describe_machine(),
        "seconds": round(time.perf_counter() - started, 2),
        "questions": records,
    }
