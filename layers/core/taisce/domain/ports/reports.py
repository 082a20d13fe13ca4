"""Reports (domain/reports.py): replaced by the worker, read by recall."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Protocol

from ..model import Report, Role


class ReportStore(Protocol):
    """A project's reports, per role and component."""

    def report_components(self, project: str, role: Role, keys: Collection[str]) -> set[str]: ...

    def replace_reports(
        self, project: str, role: Role, components: Collection[str], reports: Sequence[Report]
    ) -> list[str]: ...

    def reports_by_ids(self, project: str, ids: Sequence[str]) -> list[Report]: ...

    def reports_of_entity(
        self, project: str, key: str, roles: Collection[Role]
    ) -> list[Report]: ...
