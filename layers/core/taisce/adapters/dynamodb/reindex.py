"""Reindexing (the `taisce reindex` command): every passage, fact and live name
marked for indexing, every entity for a report rebuild, read from the listings.
"""

from __future__ import annotations

import secrets

from ...domain.model import ROLES
from ...domain.validity import unsortable
from .client import TableClient
from .codec import ALIAS_OF, live_count
from .credentials import DynamoDbCredentialStore
from .keys import LIST_MESSAGES, VECTORS, message_key, message_pk
from .names import name_items
from .project_listings import listing
from .projects import DynamoDbProjectReads
from .units import Unit, mark_dirty, mark_vector, work_touch


class DynamoDbReindex:
    """mark_everything (see the module)."""

    def __init__(
        self,
        table: TableClient,
        credentials: DynamoDbCredentialStore,
        projects: DynamoDbProjectReads,
    ) -> None:
        self.table = table
        self.credentials = credentials
        self.projects = projects

    def mark_everything(self, project: str | None = None) -> int:
        """Mark every passage, fact and live name for indexing, and every entity for a
        report rebuild (to index what was stored while no model was configured, or to
        rebuild a lost vector collection). Reads the projects' listings, never a Scan;
        without a project, every project that holds a credential. Returns how many
        vector marks were written."""
        if project is None:
            projects = sorted({c.project for c in self.credentials.list_credentials()})
        else:
            projects = [project]
        return sum(self._mark_project(p) for p in projects)

    def _mark_project(self, project: str) -> int:
        unit = Unit(claim={}, items=[])
        token = secrets.token_hex(4)
        for key, item in name_items(self.table, project):
            if ALIAS_OF in item or "n" not in item:
                continue
            for role in ROLES:
                if live_count(item, role) > 0:
                    mark_dirty(project, unit, role, [key], token)
                    entity = f"{role}:{key}"
                    mark_vector(project, unit, "entity", entity, item["n"]["S"], role)
        ids = [i["id"]["S"] for i in listing(self.table, project, LIST_MESSAGES)]
        # Each message's time, carried by its passages' marks (as put_messages writes them).
        claims = self.table._batch_get([message_key(project, m) for m in ids], "PK, occurred_at")
        times = {
            c["PK"]["S"]: unsortable(c["occurred_at"]["S"]) for c in claims if "occurred_at" in c
        }
        for message_id, passages in self.projects.passages_of_messages(project, ids).items():
            at = times.get(message_pk(project, message_id), "")
            for p in passages:
                mark_vector(project, unit, "passage", p.id, p.quote, p.role, p.position, at)
        # Every stored fact's statement, for recall's fact ranking (as the embedded store).
        for f in self.projects.project_facts(project):
            mark_vector(project, unit, "fact", f.id, f.statement, f.source_role)
        self.table._batch_write(
            [{"PutRequest": {"Item": m}} for m in unit.marks.values()], ordered=False
        )
        for prefix, p in unit.work.items():
            self.table.client.update_item(TableName=self.table.table_name, **work_touch(prefix, p))
        return sum(1 for sk in unit.marks if sk[1].startswith(f"{VECTORS}#"))
