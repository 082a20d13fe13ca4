"""The retrieval-quality harness: evidence recall of Taisce and of baselines.

For each conversation of a dataset (`../shared/bench/FORMAT.md`), in a fresh project of
an in-process local gateway (the Lambda authorizer, then the Powertools handlers, as
`taisce serve` runs them) on a temporary data folder:

1. the messages are stored with `POST /v1/messages` (batches of up to 100), then the
   facts, if the conversation has any, with `POST /v1/facts`; then the work the API
   leaves to its queue (reports rebuilt after facts change) is run to the end, as the
   local server's worker would run it shortly after the writes;
2. each question is recalled once per budget: `max_characters` = the budget,
   `source_roles` all four roles, `hops` 2, the default surfaces;
3. the baselines of `baselines.py` rank the same stored texts and are packed into the
   same budgets.

A question's evidence is covered by a Taisce bundle when the bundle holds a passage of
an evidence message, a fact whose `message_id` is one, or a report whose
`source_messages` include one; by a baseline when it packed an evidence message.
"Any" counts questions with at least one evidence message covered, "all" those with
every one covered. Questions with no evidence (no answer in the conversation) are
reported apart, with the characters each method returned.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from .baselines import BM25Ranker, DenseRanker, EmbeddingCache, fuse, pack, recency_order
from .dataset import (
    Conversation,
    Dataset,
    SpeakerMode,
    stored_facts,
    stored_messages,
)
from .machine import describe_machine

ROLES = ("user", "assistant", "system", "tool")
DEFAULT_BUDGETS = (1_000, 4_000, 16_000)
HOPS = 2
BATCH = 100
MAX_BODY = 900_000  # bytes of JSON per storing request; the API refuses over 1 MiB
SOURCE_IP = "127.0.0.1"
TAISCE = "taisce"
BASELINES = ("bm25", "dense", "hybrid", "recency")
DENSE_METHODS = ("dense", "hybrid")

SPEAKER_NOTES = {
    "both": 'the speaker is stored twice: as a content prefix ("Speaker: text") and in '
    'the source ("<source>/<Speaker>", or the speaker alone when there is no source)',
    "prefix": 'the speaker is stored as a content prefix ("Speaker: text")',
    "source": 'the speaker is stored in the source ("<source>/<Speaker>")',
}


class HarnessError(RuntimeError):
    """The run cannot go on (a setting Taisce refuses, a missing embedder...)."""


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


def find_template() -> Path:
    here = Path.cwd()
    for folder in (here, *here.parents):
        if (folder / "template.yaml").is_file() and (folder / "functions").is_dir():
            return folder / "template.yaml"
    # An editable install: layers/core/taisce/evaluation/quality.py -> the repository.
    return Path(__file__).resolve().parents[4] / "template.yaml"


def make_local_embedder(name: str) -> Any:
    """The embedder Taisce itself uses for `TAISCE_EMBEDDINGS=name`."""
    from taisce.adapters.embedders import make_embedder

    return make_embedder(name)


# -- talking to the gateway ---------------------------------------------------------


@dataclass
class Client:
    gateway: Any
    headers: dict[str, str]

    def post(self, target: str, payload: dict[str, Any]) -> tuple[int, Any, float]:
        body = json.dumps(payload).encode("utf-8")
        started = time.perf_counter()
        reply = self.gateway.handle("POST", target, self.headers, body, SOURCE_IP)
        elapsed = time.perf_counter() - started
        return reply.status, json.loads(reply.body or b"null"), elapsed


def _batches(items: Sequence[dict[str, Any]]) -> Iterator[list[dict[str, Any]]]:
    batch: list[dict[str, Any]] = []
    size = 0
    for item in items:
        item_size = len(json.dumps(item).encode("utf-8")) + 2
        if batch and (len(batch) >= BATCH or size + item_size > MAX_BODY):
            yield batch
            batch, size = [], 0
        batch.append(item)
        size += item_size
    if batch:
        yield batch


def _store(client: Client, key: str, items: Sequence[dict[str, Any]]) -> tuple[list[Any], int]:
    """Store items in batches; a refused batch is retried item by item so that one bad
    record does not lose the rest. Returns the ids (None where refused) and refusals."""
    target, expect = {"messages": ("/v1/messages", 202), "facts": ("/v1/facts", 201)}[key]
    ids: list[Any] = []
    refused = 0
    for batch in _batches(items):
        status, body, _ = client.post(target, {key: batch})
        if status == expect:
            ids.extend(entry["id"] for entry in body[key])
            continue
        if status >= 500 or len(batch) == 1:
            if status >= 500:
                raise HarnessError(f"POST {target}: {status} {json.dumps(body)[:300]}")
            ids.append(None)
            refused += 1
            continue
        for item in batch:
            status, body, _ = client.post(target, {key: [item]})
            if status == expect:
                ids.append(body[key][0]["id"])
            else:
                ids.append(None)
                refused += 1
    return ids, refused


# -- one conversation ---------------------------------------------------------------


def _percentiles(values: Sequence[float]) -> dict[str, float | None]:
    if not values:
        return {"p50": None, "p95": None}
    if len(values) == 1:
        return {"p50": values[0], "p95": values[0]}
    cuts = statistics.quantiles(values, n=100, method="inclusive")
    return {"p50": statistics.median(values), "p95": cuts[94]}


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


@dataclass
class _Run:
    """State shared by the conversations of one run."""

    gateway: Any
    options: Options
    max_rows: int
    embedder: Any | None
    cache: EmbeddingCache | None
    credentials: Any
    methods: tuple[str, ...]
    settle: Callable[[], None] | None = None
    notes: list[str] = field(default_factory=list)
    totals: Counter[str] = field(default_factory=Counter)


def _new_client(run: _Run, project: str) -> Client:
    from taisce.credentials import new_credential_id, new_secret, secret_hash
    from taisce.domain.model import Credential

    secret = new_secret()
    created = datetime.now(UTC).isoformat().replace("+00:00", "Z")
    run.credentials.add_credential(
        Credential(new_credential_id(), project, "quality bench", created), secret_hash(secret)
    )
    return Client(
        run.gateway, {"Authorization": f"Bearer {secret}", "Content-Type": "application/json"}
    )


def _embed_question(embedder: Any) -> Callable[[str], np.ndarray]:
    def embed(question: str) -> np.ndarray:
        return np.asarray(embedder.embed([question])[0], dtype=np.float32)

    return embed


def message_payload(messages: Sequence[Any]) -> list[dict[str, Any]]:
    """The items of `POST /v1/messages` for a conversation's stored messages."""
    payload = []
    for m in messages:
        item: dict[str, Any] = {"id": m.client_id, "role": m.role, "content": m.text}
        if m.source:
            item["source"] = m.source
        if m.occurred_at:
            item["occurred_at"] = m.occurred_at
        payload.append(item)
    return payload


def _run_conversation(run: _Run, index: int, conversation: Conversation) -> list[dict[str, Any]]:
    options = run.options
    client = _new_client(run, f"quality-{index}")
    messages, notes = stored_messages(conversation, options.speaker)
    run.notes.extend(f"conversation {conversation.id}: {n}" for n in notes)

    started = time.perf_counter()
    ids, refused = _store(client, "messages", message_payload(messages))
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
        _, refused = _store(client, "facts", facts)
        if refused:
            run.notes.append(f"conversation {conversation.id}: {refused} fact(s) refused")
        run.totals["facts"] += len(facts) - refused
        run.totals["conversations_with_facts"] += 1
        run.totals["store_facts_seconds"] += time.perf_counter() - started

    # Work the API leaves to the ingestion queue (reports rebuilt after facts change) is
    # done now, as the local server's worker would do it shortly after the writes.
    if run.settle is not None:
        started = time.perf_counter()
        run.settle()
        run.totals["settle_seconds"] += time.perf_counter() - started

    # The baselines' rankers, built once per conversation.
    started = time.perf_counter()
    texts = [m.text for m in messages]
    sizes = [m.characters for m in messages]
    bm25 = BM25Ranker(texts)
    dense: DenseRanker | None = None
    if run.embedder is not None and run.cache is not None:
        dense = DenseRanker(run.cache.matrix(texts), _embed_question(run.embedder))
    recent = recency_order(messages)
    run.totals["baseline_index_seconds"] += time.perf_counter() - started

    records: list[dict[str, Any]] = []
    budgets = list(options.budgets)
    for question in conversation.questions:
        evidence = list(question.evidence)
        results: dict[str, dict[str, Any]] = {m: {} for m in run.methods}
        for budget in budgets:
            request = {
                "question": question.question,
                "max_characters": budget,
                "source_roles": list(ROLES),
                "hops": HOPS,
            }
            status, answer, seconds = client.post("/v1/recalls", request)
            if status != 200:
                run.totals["taisce_errors"] += 1
                outcome = _outcome(evidence, set(), 0, seconds * 1000)
                outcome["error"] = f"{status} {json.dumps(answer)[:200]}"
            else:
                covered = {by_server_id.get(i, i) for i in _bundle_messages(answer)}
                outcome = _outcome(evidence, covered, answer["characters"], seconds * 1000)
                outcome["items"] = [
                    len(answer.get(k) or ()) for k in ("facts", "reports", "passages")
                ]
                outcome["truncated"] = bool(answer.get("truncated"))
                outcome["degraded"] = list(answer.get("degraded") or ())
            results[TAISCE][str(budget)] = outcome

        rankings: dict[str, tuple[list[int], float]] = {}
        started = time.perf_counter()
        lexical = bm25.rank(question.question)
        rankings["bm25"] = (lexical, time.perf_counter() - started)
        if dense is not None:
            started = time.perf_counter()
            semantic = dense.rank(question.question)
            rankings["dense"] = (semantic, time.perf_counter() - started)
            started = time.perf_counter()
            fused = fuse([lexical, semantic])
            fusing = time.perf_counter() - started
            rankings["hybrid"] = (fused, rankings["bm25"][1] + rankings["dense"][1] + fusing)
        rankings["recency"] = (recent, 0.0)
        for method, (ranking, ranked_in) in rankings.items():
            for budget in budgets:
                started = time.perf_counter()
                taken, used = pack(ranking, sizes, budget, run.max_rows)
                seconds = ranked_in + time.perf_counter() - started
                covered = {messages[i].dataset_id for i in taken}
                results[method][str(budget)] = _outcome(evidence, covered, used, seconds * 1000)
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


# -- figures ------------------------------------------------------------------------


def _share(part: int, whole: int) -> float | None:
    return part / whole if whole else None


def _method_figures(
    records: Sequence[dict[str, Any]], method: str, budget: str, categories: Sequence[str]
) -> dict[str, Any]:
    answerable = [r for r in records if r["evidence"]]
    outcomes = [r["results"][method][budget] for r in answerable]
    by_category: dict[str, Any] = {}
    for category in categories:
        chosen = [r["results"][method][budget] for r in answerable if r["category"] == category]
        by_category[category] = {
            "questions": len(chosen),
            "evidence_any": _share(sum(o["any"] for o in chosen), len(chosen)),
            "evidence_all": _share(sum(o["all"] for o in chosen), len(chosen)),
        }
    every = [r["results"][method][budget] for r in records]
    figures: dict[str, Any] = {
        "questions": len(outcomes),
        "evidence_any": _share(sum(o["any"] for o in outcomes), len(outcomes)),
        "evidence_all": _share(sum(o["all"] for o in outcomes), len(outcomes)),
        "by_category": by_category,
        "mean_characters": statistics.fmean(o["characters"] for o in outcomes)
        if outcomes
        else None,
        "latency_ms": _percentiles([o["ms"] for o in every]),
    }
    if method == TAISCE:
        items = [o["items"] for o in every if "items" in o]
        figures["mean_items"] = {
            kind: statistics.fmean(i[n] for i in items) if items else None
            for n, kind in enumerate(("facts", "reports", "passages"))
        }
        figures["truncated_share"] = _share(
            sum(o.get("truncated", False) for o in every), len(every)
        )
        degraded: Counter[str] = Counter(s for o in every for s in o.get("degraded", ()))
        figures["degraded"] = dict(degraded)
        figures["errors"] = sum(1 for o in every if "error" in o)
    return figures


def _no_answer_figures(records: Sequence[dict[str, Any]], method: str, budget: str) -> dict:
    outcomes = [r["results"][method][budget] for r in records if not r["evidence"]]
    return {
        "questions": len(outcomes),
        "mean_characters": statistics.fmean(o["characters"] for o in outcomes)
        if outcomes
        else None,
        "empty_share": _share(sum(o["characters"] == 0 for o in outcomes), len(outcomes)),
    }


def _ratio(a: float | None, b: float | None) -> float | None:
    if a is None or b is None or b == 0:
        return None
    return a / b


def summarise(
    records: Sequence[dict[str, Any]], methods: Sequence[str], budgets: Sequence[int]
) -> dict[str, Any]:
    categories = list(dict.fromkeys(r["category"] for r in records if r["evidence"]))
    per_budget = []
    for budget in budgets:
        key = str(budget)
        figures = {m: _method_figures(records, m, key, categories) for m in methods}
        ratios = {
            m: {
                "evidence_any": _ratio(figures[TAISCE]["evidence_any"], figures[m]["evidence_any"]),
                "evidence_all": _ratio(figures[TAISCE]["evidence_all"], figures[m]["evidence_all"]),
            }
            for m in methods
            if m != TAISCE
        }
        per_budget.append(
            {
                "budget": budget,
                "methods": figures,
                "taisce_over": ratios,
                "no_answer": {m: _no_answer_figures(records, m, key) for m in methods},
            }
        )
    return {"categories": categories, "budgets": per_budget}


# -- the run ------------------------------------------------------------------------

_ENV_KEYS = (
    "TAISCE_DATA_DIR",
    "TAISCE_EMBEDDINGS",
    "TAISCE_BUNDLE_CHARACTERS",
    "TAISCE_STORE",
)


@contextmanager
def embedded_run(prefix: str, embeddings: str, budget: int) -> Iterator[Path]:
    """A fresh data folder with the environment that points Taisce's wiring at it (the
    embedded store, this model, a bundle limit that admits `budget`); afterwards the
    environment is restored, the wiring forgotten and the folder removed."""
    from taisce.api.wiring import services

    saved = {k: os.environ.get(k) for k in _ENV_KEYS}
    folder = Path(tempfile.mkdtemp(prefix=prefix))
    os.environ["TAISCE_DATA_DIR"] = str(folder)
    os.environ["TAISCE_EMBEDDINGS"] = embeddings
    os.environ["TAISCE_BUNDLE_CHARACTERS"] = str(max(16_000, budget))
    os.environ["TAISCE_STORE"] = "embedded"
    services.cache_clear()
    try:
        yield folder
    finally:
        services.cache_clear()
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        shutil.rmtree(folder, ignore_errors=True)


def _settler(memory: Any) -> Callable[[], None]:
    """Passes of the local server's background worker until no work is pending."""
    from taisce.local.worker import Worker

    worker = Worker(memory)

    def settle() -> None:
        for _ in range(10):
            worker.run_once()
            if not memory.work_pending():
                return

    return settle


def gateway_run(embeddings: str, embedder: Any = None) -> tuple[Any, _Run]:
    """Inside embedded_run: the wiring, and a _Run over the local gateway (every handler
    imported) whose settle() drains the worker's pending work: what the scripts in
    bench/ that store conversations through the API start from."""
    from taisce.api.wiring import services
    from taisce.local.gateway import Gateway
    from taisce.local.routes import read_api

    built = services()
    gateway = Gateway(read_api(find_template()))
    gateway.warm()
    run = _Run(
        gateway=gateway,
        options=Options(embeddings=embeddings),
        max_rows=built.settings.max_rows,
        embedder=embedder,
        cache=None,
        credentials=built.credentials,
        methods=(),
        settle=_settler(built.memory),
    )
    return built, run


def store_conversation(client: Client, conversation: Conversation) -> list[tuple[Any, str]]:
    """Store a conversation's messages (the speaker both ways) and facts through the API
    as run_quality does, without its notes and timings; the messages kept, each with
    the id the server gave it."""
    messages, _ = stored_messages(conversation, "both")
    ids, _ = _store(client, "messages", message_payload(messages))
    kept = [(m, i) for m, i in zip(messages, ids, strict=True) if i is not None]
    if conversation.facts:
        _store(client, "facts", stored_facts(conversation.facts, [m for m, _ in kept]))
    return kept


def run_quality(dataset: Dataset, options: Options) -> dict[str, Any]:
    """Store, recall and score every conversation; the figures as one JSON-ready dict."""
    from taisce.api.wiring import services
    from taisce.local.gateway import Gateway
    from taisce.local.routes import read_api
    from taisce.settings import SettingsError

    budgets = sorted(set(options.budgets))
    if not budgets or budgets[0] < 1:
        raise HarnessError("budgets must be positive integers")
    options = replace(options, budgets=budgets)
    started = time.perf_counter()
    conversations = dataset.conversations
    if options.limit_conversations is not None:
        conversations = conversations[: options.limit_conversations]

    embedder = options.embedder
    notes: list[str] = list(dataset.warnings)
    if embedder is None and options.embeddings != "none":
        embedder = make_local_embedder(options.embeddings)
        if embedder is None:
            raise HarnessError(f"--embeddings {options.embeddings}: Taisce has no such model")
    if embedder is not None:
        embedder.embed(["warm-up"])  # the model loads here, not in the first timing
        methods = (TAISCE, *BASELINES)
        if options.embeddings == "none":
            notes.append(
                "embeddings none: Taisce runs step 1 only; the dense and hybrid baselines "
                f"use the embedder given ({getattr(embedder, 'name', type(embedder).__name__)})"
            )
    else:
        methods = (TAISCE, "bm25", "recency")
        notes.append(
            "embeddings none: Taisce runs step 1 only, and the dense and hybrid "
            "baselines are skipped (they need the embedder)"
        )

    records: list[dict[str, Any]] = []
    with embedded_run("taisce-quality-", options.embeddings, budgets[-1]):
        try:
            built = services()
        except SettingsError as exc:
            raise HarnessError(f"Taisce refused the settings of this run: {exc}") from None
        gateway = Gateway(read_api(options.template or find_template()))
        gateway.warm()
        run = _Run(
            gateway=gateway,
            options=options,
            max_rows=built.settings.max_rows,
            embedder=embedder,
            cache=EmbeddingCache(embedder) if embedder is not None else None,
            credentials=built.credentials,
            methods=methods,
            settle=_settler(built.memory),
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
            "passage: role + source + text code points; whole messages in ranked order "
            "until the first that does not fit or the row limit",
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


# -- the table ----------------------------------------------------------------------


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}%"


def _num(value: float | None, digits: int = 0) -> str:
    return "n/a" if value is None else f"{value:,.{digits}f}"


def _times(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}x"


def markdown(report: dict[str, Any]) -> str:
    d, s = report["dataset"], report["settings"]
    categories = report["categories"]
    lines = [
        f"## Retrieval quality: {d['name']}",
        "",
        f"- dataset: {d['file']}; {d['conversations']} conversations, {d['messages']:,} "
        f"messages, {d['facts']:,} facts (in {d['conversations_with_facts']} "
        f"conversations), {d['questions']} questions ({d['answerable']} with evidence, "
        f"{d['no_answer']} without)",
        f"- Taisce: embeddings {s['embeddings']}, {s['store']} store, max_rows "
        f"{s['max_rows']}; recall with source_roles all four, hops {s['recall']['hops']}, "
        "default surfaces, max_characters = the budget",
        f"- speaker: {s['speaker_storage']}",
        f"- baselines: {s['item_characters']}",
        f"- {report['date']}, {report['machine']['cpu_count']} CPUs, "
        f"{report['seconds']:.1f} s in all",
    ]
    lines += [f"- note: {n}" for n in report["notes"][:20]]
    if len(report["notes"]) > 20:
        lines.append(f"- ... and {len(report['notes']) - 20} more notes (see --json)")
    lines += [
        "",
        "Evidence recall = share of questions with evidence whose evidence messages the "
        "bundle covers (any: at least one; all: every one). Category cells: any / all. "
        "Latency: Taisce through the gateway (authorizer, handler, JSON); baselines "
        "in-process ranking and packing (dense includes embedding the question).",
    ]
    cat_heads = "".join(f" {c} ({d['categories'][c]}) |" for c in categories)
    for block in report["budgets"]:
        lines += [
            "",
            f"### max_characters {block['budget']:,}",
            "",
            f"| method | evidence any | evidence all |{cat_heads} mean characters "
            "| p50 ms | p95 ms |",
            "|---|---:|---:|" + "---:|" * len(categories) + "---:|---:|---:|",
        ]
        for method, f in block["methods"].items():
            cells = "".join(
                f" {_pct(f['by_category'][c]['evidence_any'])} / "
                f"{_pct(f['by_category'][c]['evidence_all'])} |"
                for c in categories
            )
            lines.append(
                f"| {method} | {_pct(f['evidence_any'])} | {_pct(f['evidence_all'])} |{cells} "
                f"{_num(f['mean_characters'])} | {_num(f['latency_ms']['p50'], 2)} "
                f"| {_num(f['latency_ms']['p95'], 2)} |"
            )
    baselines = [m for m in s["methods"] if m != TAISCE]
    lines += [
        "",
        "### Taisce ÷ baseline (evidence any / all)",
        "",
        "| budget |" + "".join(f" ÷ {m} |" for m in baselines),
        "|---:|" + "---:|" * len(baselines),
    ]
    for block in report["budgets"]:
        cells = "".join(
            f" {_times(block['taisce_over'][m]['evidence_any'])} / "
            f"{_times(block['taisce_over'][m]['evidence_all'])} |"
            for m in baselines
        )
        lines.append(f"| {block['budget']:,} |{cells}")
    lines += [
        "",
        "### Taisce bundles",
        "",
        "| budget | facts | reports | passages (mean items) | truncated | degraded | errors |",
        "|---:|---:|---:|---:|---:|---|---:|",
    ]
    for block in report["budgets"]:
        t = block["methods"][TAISCE]
        items = t["mean_items"]
        degraded = ", ".join(f"{k} {v}" for k, v in t["degraded"].items()) or "none"
        lines.append(
            f"| {block['budget']:,} | {_num(items['facts'], 1)} | {_num(items['reports'], 1)} "
            f"| {_num(items['passages'], 1)} | {_pct(t['truncated_share'])} | {degraded} "
            f"| {t['errors']} |"
        )
    if d["no_answer"]:
        lines += [
            "",
            f"### Questions without evidence ({d['no_answer']}): characters returned",
            "",
            "| budget |" + "".join(f" {m} |" for m in s["methods"]),
            "|---:|" + "---:|" * len(s["methods"]),
        ]
        for block in report["budgets"]:
            cells = "".join(
                f" {_num(block['no_answer'][m]['mean_characters'])} "
                f"({_pct(block['no_answer'][m]['empty_share'])} empty) |"
                for m in s["methods"]
            )
            lines.append(f"| {block['budget']:,} |{cells}")
    return "\n".join(lines)
