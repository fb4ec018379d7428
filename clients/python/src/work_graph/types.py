"""The shapes of docs/api.md, as the server sends them (JSON objects; times are ISO-8601 UTC strings)."""

from __future__ import annotations

from typing import Any, Literal, TypedDict


class Lease(TypedDict):
    id: str
    workItemId: str
    workerId: str
    epoch: int
    acquiredAt: str
    expiresAt: str
    renewedAt: str | None
    endedAt: str | None
    outcome: str | None


class WorkItem(TypedDict):
    id: str
    title: str
    description: str | None
    parentId: str | None
    status: Literal["open", "released", "cancelled"]
    stage: str
    priority: int
    dependsOn: list[str]
    openChildCount: int
    currentLease: Lease | None
    previousWorkerId: str | None
    projectId: str
    requires: list[str]
    concurrencyKey: str | None
    notBefore: str | None
    externalId: str | None
    createdAt: str
    updatedAt: str


class AttentionRequest(TypedDict):
    id: str
    workItemId: str
    leaseId: str
    workerId: str
    kind: str
    question: str
    context: str | None
    options: list[str]
    blocking: bool
    status: Literal["open", "resolved"]
    resolution: str | None
    resolvedBy: str | None
    createdAt: str
    resolvedAt: str | None


class Note(TypedDict):
    id: str
    workItemId: str
    leaseId: str
    epoch: int
    workerId: str
    content: str
    createdAt: str


class Claim(TypedDict):
    """What leases.claim answers: the lease, its item, and the questions asked under the item's previous lease."""

    lease: Lease
    workItem: WorkItem
    attention: list[AttentionRequest]


class Finished(TypedDict):
    lease: Lease
    workItem: WorkItem


class Asked(TypedDict):
    request: AttentionRequest
    endedLease: Lease | None


AttentionKind = Literal["decision", "authority", "access", "review", "help", "scope"]
Json = dict[str, Any]
