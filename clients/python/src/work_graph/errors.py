"""Exceptions: one class per reason of docs/api.md "Errors", all subclasses of WorkGraphError."""

from __future__ import annotations

from typing import Any


class WorkGraphError(Exception):
    """A refused or failed call. `reason` is docs/api.md's reason (or NETWORK), `detail` its facts."""

    reason: str = "UNKNOWN"

    def __init__(self, message: str, *, reason: str | None = None, status: int | None = None, detail: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.message = message
        if reason is not None:
            self.reason = reason
        self.status = status
        self.detail: dict[str, Any] = detail or {}


class NetworkError(WorkGraphError):
    """No answer: the connection failed or timed out. Safe to retry a call that has an idempotency key."""

    reason = "NETWORK"


class Validation(WorkGraphError):
    reason = "VALIDATION"


class Unauthenticated(WorkGraphError):
    reason = "UNAUTHENTICATED"


class Forbidden(WorkGraphError):
    reason = "FORBIDDEN"


class NotFound(WorkGraphError):
    reason = "NOT_FOUND"


class LeaseNotCurrent(WorkGraphError):
    """The lease is not the item's live lease: stop, and write nothing more with it (`detail["kind"]` says why)."""

    reason = "LEASE_NOT_CURRENT"


class NotClaimable(WorkGraphError):
    reason = "NOT_CLAIMABLE"


class AlreadyTerminal(WorkGraphError):
    reason = "ALREADY_TERMINAL"


class ItemLeased(WorkGraphError):
    reason = "ITEM_LEASED"


class DependencyCycle(WorkGraphError):
    reason = "DEPENDENCY_CYCLE"


class Duplicate(WorkGraphError):
    reason = "DUPLICATE"


class AlreadyResolved(WorkGraphError):
    reason = "ALREADY_RESOLVED"


class IdempotencyKeyReused(WorkGraphError):
    reason = "IDEMPOTENCY_KEY_REUSED"


class WorkerDrained(WorkGraphError):
    reason = "WORKER_DRAINED"


class TooLarge(WorkGraphError):
    reason = "TOO_LARGE"


class Unavailable(WorkGraphError):
    reason = "UNAVAILABLE"


class Internal(WorkGraphError):
    reason = "INTERNAL"


class LimitReached(WorkGraphError):
    reason = "LIMIT_REACHED"


ERRORS_BY_REASON: dict[str, type[WorkGraphError]] = {
    cls.reason: cls
    for cls in (
        Validation, Unauthenticated, Forbidden, NotFound, LeaseNotCurrent, NotClaimable, AlreadyTerminal, ItemLeased,
        DependencyCycle, Duplicate, AlreadyResolved, IdempotencyKeyReused, WorkerDrained, TooLarge, Unavailable, Internal,
        LimitReached,
    )
}


def error_from_reply(status: int, body: Any) -> WorkGraphError:
    """The exception for a tRPC error reply (`{"error": {"message", "data": {"reason", "detail"}}}`)."""
    error = body.get("error") if isinstance(body, dict) else None
    if not isinstance(error, dict):
        return WorkGraphError(f"HTTP {status} without a tRPC error body", status=status)
    data = error.get("data")
    data = data if isinstance(data, dict) else {}
    detail = data.get("detail")
    reason = str(data.get("reason", "UNKNOWN"))
    cls = ERRORS_BY_REASON.get(reason, WorkGraphError)
    return cls(str(error.get("message", reason)), reason=reason, status=status, detail=detail if isinstance(detail, dict) else None)
