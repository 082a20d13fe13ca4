"""The use cases behind the routes: store, list, delete and recall memory, and the
background work that keeps reports and vectors up to date."""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection
from datetime import UTC, datetime

from ..ports import Store, VectorItem
from .controls import Limits, RecallRequest, resolve
from .errors import NotFound
from .ingest import (
    FactsRequest,
    MessagesRequest,
    make_fact,
    make_message,
    split_passages,
    timestamp,
)
from .model import Fact, Role
from .names import normalize_name
from .recall import Semantic, recall
from .reports import build_reports

logger = logging.getLogger(__name__)

# A rebuild reads at most this many facts of one component: it bounds the work one
# write can cause (a giant component is summarised from its first facts).
COMPONENT_FACTS = 20_000


def _now() -> datetime:
    return datetime.now(UTC)


class Memory:
    def __init__(
        self,
        store: Store,
        limits: Limits,
        *,
        semantic: Semantic | None = None,
        clock: Callable[[], datetime] = _now,
    ) -> None:
        self.store = store
        self.limits = limits
        self.semantic = semantic
        self.clock = clock

    # -- writes ----------------------------------------------------------------

    def store_facts(self, project: str, request: FactsRequest) -> list[str]:
        recorded_at = timestamp(self.clock())
        facts = [make_fact(given, recorded_at) for given in request.facts]
        # Entity names are indexed once per role that uses them ("<role>:<key>"), so
        # similar-name search can leave out names only other roles use.
        names: dict[tuple[Role, str], str] = {}
        for f in facts:
            names.setdefault((f.source_role, f.subject_key), f.subject)
            if f.object_key:
                names.setdefault((f.source_role, f.object_key), f.object)
        new_names: dict[tuple[Role, str], str] = {}
        if self.semantic is not None:
            for role in {r for r, _ in names}:
                keys = [k for r, k in names if r == role]
                known = self.store.known_names(project, keys, [role])
                new_names |= {(role, k): names[(role, k)] for k in keys if k not in known}
        self.store.put_facts(project, facts)
        self._index(
            "entity names",
            project,
            "entity",
            [f"{role}:{key}" for role, key in new_names],
            list(new_names.values()),
            [role for role, _ in new_names],
        )
        return [f.id for f in facts]

    def store_messages(self, project: str, request: MessagesRequest) -> list[str]:
        recorded_at = timestamp(self.clock())
        messages = [make_message(given, recorded_at) for given in request.messages]
        passages = [p for m in messages for p in split_passages(m)]
        new = self.store.put_messages(project, messages, passages)
        fresh = [p for p in passages if p.message_id in new]
        self._index(
            "passages",
            project,
            "passage",
            [p.id for p in fresh],
            [p.quote for p in fresh],
            [p.role for p in fresh],
        )
        return [m.id for m in messages]

    def _index(
        self,
        what: str,
        project: str,
        kind: str,
        ids: list[str],
        texts: list[str],
        roles: list[Role] | None = None,
    ) -> None:
        """Embed texts in one batch and index them. What is stored stays stored if
        this fails: the failure is logged and the items are left unindexed."""
        if self.semantic is None or not ids:
            return
        try:
            vectors = self.semantic.embedder.embed(texts)
            self.semantic.index.upsert(
                project,
                kind,  # type: ignore[arg-type]
                [
                    VectorItem(i, v, roles[n] if roles else None, texts[n])
                    for n, (i, v) in enumerate(zip(ids, vectors, strict=True))
                ],
            )
        except Exception:
            logger.exception("indexing %s failed; they stay stored but unindexed", what)

    def delete_fact(self, project: str, fact_id: str) -> None:
        if not self.store.delete_fact(project, fact_id):
            raise NotFound(f"no fact with id {fact_id!r}")

    # -- reads -----------------------------------------------------------------

    def facts_about_subject(self, project: str, subject: str) -> list[dict[str, object]]:
        return [f.wire() for f in self.store.facts_with_subject(project, normalize_name(subject))]

    def recall(self, project: str, request: RecallRequest) -> dict[str, object]:
        controls = resolve(request, self.limits)
        return recall(self.store, project, request.question, controls, semantic=self.semantic)

    # -- background work ---------------------------------------------------------

    def work_pending(self) -> bool:
        """Whether reports wait to be rebuilt after recent writes."""
        return bool(self.store.dirty_projects())

    def _component_facts(self, project: str, role: Role, keys: Collection[str]) -> list[Fact]:
        """The facts of one role's connected components around these entities."""
        seen_facts: dict[str, Fact] = {}
        visited = set(keys)
        frontier = sorted(keys)
        while frontier and len(seen_facts) < COMPONENT_FACTS:
            found = list(
                self.store.facts_about(
                    project, frontier, [role], COMPONENT_FACTS - len(seen_facts), seen_facts
                )
            )
            following: list[str] = []
            for f in found:
                seen_facts[f.id] = f
                for k in (f.subject_key, f.object_key):
                    if k and k not in visited:
                        visited.add(k)
                        following.append(k)
            frontier = following
        return sorted(seen_facts.values(), key=lambda f: (f.recorded_at, f.id))

    def rebuild_reports(self, project: str) -> int:
        """Rebuild the reports around the entities whose facts changed. Returns how
        many reports were written. Run by a worker after writes, never by a recall."""
        marks = self.store.dirty_entities(project)
        dirty: dict[Role, set[str]] = {}
        for role, key, _ in marks:
            dirty.setdefault(role, set()).add(key)
        written = 0
        for role, keys in dirty.items():
            facts = self._component_facts(project, role, keys)
            reached = set(keys) | {k for f in facts for k in (f.subject_key, f.object_key) if k}
            stale = self.store.report_components(project, role, reached)
            reports = [r for r in build_reports(facts) if r.role == role]
            dropped = self.store.replace_reports(project, role, stale, reports)
            written += len(reports)
            if self.semantic is not None:
                try:
                    self.semantic.index.delete(project, "report", dropped)
                except Exception:
                    logger.exception("removing report vectors failed")
                self._index(
                    "reports",
                    project,
                    "report",
                    [r.id for r in reports],
                    [f"{r.title}. {r.summary}" for r in reports],
                    [r.role for r in reports],
                )
        self.store.clear_dirty(project, marks)
        return written
