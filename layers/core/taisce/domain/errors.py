"""Domain errors; the API layer maps each to one HTTP status and error body."""

from __future__ import annotations


class TaisceError(Exception):
    code = "internal"
    status = 500

    def __init__(self, message: str, control: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.control = control


class InvalidRequest(TaisceError):
    code = "invalid_request"
    status = 400


class InvalidRecallControls(TaisceError):
    code = "invalid_recall_controls"
    status = 400

    def __init__(self, control: str, message: str) -> None:
        super().__init__(message, control)


class Unauthorized(TaisceError):
    code = "unauthorized"
    status = 401

    def __init__(self, message: str = "a valid bearer credential is required") -> None:
        super().__init__(message)


class Forbidden(TaisceError):
    """A known credential that may not do this (acting for another user, or minting
    without being an admin's)."""

    code = "forbidden"
    status = 403


class NotFound(TaisceError):
    code = "not_found"
    status = 404


class ErasurePending(TaisceError):
    """A write in a user's scope while that user's erasure is pending: refused, so the
    erasure neither takes it after the answer nor leaves part of it behind."""

    code = "erasure_pending"
    status = 409


class PayloadTooLarge(TaisceError):
    code = "payload_too_large"
    status = 413


class StorageFull(TaisceError):
    """The store's disk (or its size limit) is full: nothing was written; reads still
    work. Retrying helps only once space is freed."""

    code = "insufficient_storage"
    status = 507
