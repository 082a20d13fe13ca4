"""domain.erasure_reports: the reports an erasure drops and the marks it leaves."""

from __future__ import annotations

from taisce.domain.erasure_reports import ReportMarks, report_marks, touched_by_erasure


def test_per_role_the_erased_entities_and_the_ends_of_that_roles_erased_facts() -> None:
    facts = [("user", "maya", "atlas"), ("tool", "acme", None), ("user", "atlas", "atlas")]
    assert touched_by_erasure(["atlas"], facts) == {
        "user": {"atlas", "maya"},
        "assistant": {"atlas"},
        "system": {"atlas"},
        "tool": {"atlas", "acme"},
    }


def test_members_are_marked_the_erased_names_never_and_their_marks_go() -> None:
    marks = report_marks({"atlas", "maya"}, ["maya", "dublin", "atlas"], {"atlas"})
    assert marks == ReportMarks(["dublin", "maya"], ["atlas"])


def test_a_store_without_the_tombstone_check_marks_the_erased_names_too() -> None:
    marks = report_marks({"atlas"}, ["dublin"], {"atlas"}, mark_erased=True)
    assert marks == ReportMarks(["atlas", "dublin"], [])
