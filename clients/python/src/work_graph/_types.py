"""The shapes of docs/api.md as TypedDicts, generated from the OpenAPI document: do not edit.

Regenerate with `npm run generate:python` (scripts/generate-python-types.ts). Each procedure's
input is `<Procedure>Input` (e.g. `LeasesClaimInput`), its answer `<Procedure>Output` where the
document names one (an answer shared by several procedures is named after the first).
"""

from __future__ import annotations

from typing import Any, Literal, TypedDict


Stage = Literal["ready", "leased", "blocked", "waiting_on_children", "needs_attention", "released", "cancelled", "scheduled"]


LeaseOutcome = Literal["released", "cancelled", "decomposed", "attention_requested", "expired", "revoked", "returned"]


AttentionKind = Literal["decision", "authority", "access", "review", "help", "scope"]


Role = Literal["agent", "operator", "admin"]


Reason = Literal["VALIDATION", "UNAUTHENTICATED", "FORBIDDEN", "NOT_FOUND", "LEASE_NOT_CURRENT", "NOT_CLAIMABLE", "ALREADY_TERMINAL", "ITEM_LEASED", "DEPENDENCY_CYCLE", "DUPLICATE", "ALREADY_RESOLVED", "IDEMPOTENCY_KEY_REUSED", "WORKER_DRAINED", "TOO_LARGE", "UNAVAILABLE", "INTERNAL", "LIMIT_REACHED"]


REASONS: tuple[Reason, ...] = ("VALIDATION", "UNAUTHENTICATED", "FORBIDDEN", "NOT_FOUND", "LEASE_NOT_CURRENT", "NOT_CLAIMABLE", "ALREADY_TERMINAL", "ITEM_LEASED", "DEPENDENCY_CYCLE", "DUPLICATE", "ALREADY_RESOLVED", "IDEMPOTENCY_KEY_REUSED", "WORKER_DRAINED", "TOO_LARGE", "UNAVAILABLE", "INTERNAL", "LIMIT_REACHED")


Lease = TypedDict("Lease", {
    "id": str,
    "workItemId": str,
    "workerId": str,
    "epoch": int,
    "acquiredAt": str,
    "expiresAt": str,
    "renewedAt": str | None,
    "endedAt": str | None,
    "outcome": LeaseOutcome | None,
})


WorkItem = TypedDict("WorkItem", {
    "id": str,
    "title": str,
    "description": str | None,
    "parentId": str | None,
    "status": Literal["open", "released", "cancelled"],
    "stage": Stage,
    "priority": int,
    "dependsOn": list[str],
    "openChildCount": int,
    "currentLease": Lease | None,
    "previousWorkerId": str | None,
    "projectId": str,
    "requires": list[str],
    "concurrencyKey": str | None,
    "notBefore": str | None,
    "externalId": str | None,
    "createdAt": str,
    "updatedAt": str,
})


AttentionRequest = TypedDict("AttentionRequest", {
    "id": str,
    "workItemId": str,
    "leaseId": str,
    "workerId": str,
    "kind": AttentionKind,
    "question": str,
    "context": str | None,
    "options": list[str],
    "blocking": bool,
    "status": Literal["open", "resolved"],
    "resolution": str | None,
    "resolvedBy": str | None,
    "resolvedByName": str | None,
    "createdAt": str,
    "resolvedAt": str | None,
})


Note = TypedDict("Note", {
    "id": str,
    "workItemId": str,
    "leaseId": str,
    "epoch": int,
    "workerId": str,
    "content": str,
    "createdAt": str,
})


Event = TypedDict("Event", {
    "sequence": int,
    "workItemId": str,
    "type": str,
    "actor": str,
    "actorName": str | None,
    "leaseId": str | None,
    "epoch": int | None,
    "data": dict[str, Any],
    "createdAt": str,
})


WorkerLastHour = TypedDict("WorkerLastHour", {
    "claimed": int,
    "released": int,
    "expired": int,
    "revoked": int,
})


Worker = TypedDict("Worker", {
    "workerId": str,
    "liveLeases": int,
    "drained": bool,
    "drainReason": str | None,
    "drainedBy": str | None,
    "drainedByName": str | None,
    "lastSeenAt": str | None,
    "lastHour": WorkerLastHour,
    "capabilities": list[str],
})


Webhook = TypedDict("Webhook", {
    "id": str,
    "url": str,
    "events": list[str],
    "format": Literal["json", "slack", "slack_app", "github"],
    "label": str | None,
    "createdAt": str,
    "lastDeliveredAt": str | None,
    "failing": bool,
    "lastError": str | None,
})


Delivery = TypedDict("Delivery", {
    "id": str,
    "webhookId": str,
    "eventSequence": int,
    "eventType": str,
    "attempts": int,
    "status": Literal["pending", "delivered", "failed"],
    "responseStatus": int | None,
    "responseBody": str | None,
    "error": str | None,
    "createdAt": str,
    "deliveredAt": str | None,
    "nextAttemptAt": str | None,
})


Limit = TypedDict("Limit", {
    "key": str,
    "maxLeases": int,
    "liveLeases": int,
    "updatedAt": str,
})


Project = TypedDict("Project", {
    "id": str,
    "name": str,
    "createdAt": str,
})


Token = TypedDict("Token", {
    "id": str,
    "role": Role,
    "workerId": str | None,
    "label": str | None,
    "projects": list[str],
    "capabilities": list[str],
    "createdAt": str,
    "revokedAt": str | None,
    "lastUsedAt": str | None,
    "personId": str | None,
    "personName": str | None,
})


Person = TypedDict("Person", {
    "id": str,
    "issuer": str,
    "subject": str,
    "email": str | None,
    "name": str | None,
    "role": Literal["operator", "admin"],
    "createdAt": str,
    "lastSeenAt": str,
    "disabledAt": str | None,
})


HealthCheckOutput = TypedDict("HealthCheckOutput", {
    "ok": Literal[True],
    "database": Literal["ok"],
    "now": str,
})


WorkItemsListOutput = TypedDict("WorkItemsListOutput", {
    "items": list[WorkItem],
    "nextCursor": str | None,
})


WorkItemsQueueOutput = list[WorkItem]


WorkItemsImportOutputExistingItem = TypedDict("WorkItemsImportOutputExistingItem", {
    "ref": str,
    "id": str,
})


WorkItemsImportOutput = TypedDict("WorkItemsImportOutput", {
    "created": list[WorkItem],
    "existing": list[WorkItemsImportOutputExistingItem],
    "refs": dict[str, str],
})


LeasesClaimOutput = TypedDict("LeasesClaimOutput", {
    "lease": Lease,
    "workItem": WorkItem,
    "attention": list[AttentionRequest],
})


LeasesReleaseOutput = TypedDict("LeasesReleaseOutput", {
    "lease": Lease,
    "workItem": WorkItem,
})


LeasesDecomposeOutput = TypedDict("LeasesDecomposeOutput", {
    "parent": WorkItem,
    "children": list[WorkItem],
    "endedLease": Lease,
    "childLease": Lease | None,
})


LeasesActiveOutputItem = TypedDict("LeasesActiveOutputItem", {
    "id": str,
    "workItemId": str,
    "workerId": str,
    "epoch": int,
    "acquiredAt": str,
    "expiresAt": str,
    "renewedAt": str | None,
    "endedAt": str | None,
    "outcome": LeaseOutcome | None,
    "workItemTitle": str,
    "secondsLeft": float,
})


LeasesActiveOutput = list[LeasesActiveOutputItem]


LeasesRecentOutputItem = TypedDict("LeasesRecentOutputItem", {
    "id": str,
    "workItemId": str,
    "workerId": str,
    "epoch": int,
    "acquiredAt": str,
    "expiresAt": str,
    "renewedAt": str | None,
    "endedAt": str | None,
    "outcome": LeaseOutcome | None,
    "workItemTitle": str,
})


LeasesRecentOutput = list[LeasesRecentOutputItem]


LeasesHistoryOutput = list[Lease]


AttentionRequestOutput = TypedDict("AttentionRequestOutput", {
    "request": AttentionRequest,
    "endedLease": Lease | None,
})


AttentionResolveOutput = TypedDict("AttentionResolveOutput", {
    "request": AttentionRequest,
    "workItem": WorkItem,
})


AttentionListOutput = TypedDict("AttentionListOutput", {
    "items": list[AttentionRequest],
    "nextCursor": str | None,
})


NotesListOutput = TypedDict("NotesListOutput", {
    "items": list[Note],
    "nextCursor": str | None,
})


EventsListOutput = TypedDict("EventsListOutput", {
    "items": list[Event],
    "nextCursor": str | None,
})


DashboardSummaryOutputStages = TypedDict("DashboardSummaryOutputStages", {
    "ready": int,
    "leased": int,
    "blocked": int,
    "waiting_on_children": int,
    "needs_attention": int,
    "released": int,
    "cancelled": int,
    "scheduled": int,
})


DashboardSummaryOutput = TypedDict("DashboardSummaryOutput", {
    "stages": DashboardSummaryOutputStages,
    "activeLeases": int,
    "openAttention": int,
    "expiringWithin60s": int,
    "unroutable": int,
    "now": str,
})


DashboardUnroutableOutputItemsItem = TypedDict("DashboardUnroutableOutputItemsItem", {
    "item": WorkItem,
    "missing": list[str],
})


DashboardUnroutableOutput = TypedDict("DashboardUnroutableOutput", {
    "items": list[DashboardUnroutableOutputItemsItem],
    "total": int,
})


DashboardEndedLastHourOutput = TypedDict("DashboardEndedLastHourOutput", {
    "released": int,
    "cancelled": int,
    "decomposed": int,
    "attention_requested": int,
    "expired": int,
    "revoked": int,
    "returned": int,
})


DashboardInboxOutputItem = TypedDict("DashboardInboxOutputItem", {
    "id": str,
    "workItemId": str,
    "leaseId": str,
    "workerId": str,
    "kind": AttentionKind,
    "question": str,
    "context": str | None,
    "options": list[str],
    "blocking": bool,
    "status": Literal["open", "resolved"],
    "resolution": str | None,
    "resolvedBy": str | None,
    "resolvedByName": str | None,
    "createdAt": str,
    "resolvedAt": str | None,
    "workItemTitle": str,
    "workItemStage": Stage,
})


DashboardInboxOutput = list[DashboardInboxOutputItem]


DashboardNeighbourhoodOutputAncestorsItem = TypedDict("DashboardNeighbourhoodOutputAncestorsItem", {
    "id": str,
    "title": str,
    "stage": Stage,
    "depth": int,
})


DashboardNeighbourhoodOutputDependenciesItem = TypedDict("DashboardNeighbourhoodOutputDependenciesItem", {
    "id": str,
    "title": str,
    "stage": Stage,
})


DashboardNeighbourhoodOutputDependentsItem = TypedDict("DashboardNeighbourhoodOutputDependentsItem", {
    "id": str,
    "title": str,
    "stage": Stage,
})


DashboardNeighbourhoodOutputChildrenItem = TypedDict("DashboardNeighbourhoodOutputChildrenItem", {
    "id": str,
    "title": str,
    "stage": Stage,
})


DashboardNeighbourhoodOutputAncestorBlockersItem = TypedDict("DashboardNeighbourhoodOutputAncestorBlockersItem", {
    "id": str,
    "title": str,
    "stage": Stage,
    "ancestorId": str,
})


DashboardNeighbourhoodOutputWaitingOnItemNeedsAttentionRequestsItem = TypedDict("DashboardNeighbourhoodOutputWaitingOnItemNeedsAttentionRequestsItem", {
    "id": str,
    "question": str,
    "workerId": str,
    "createdAt": str,
})


DashboardNeighbourhoodOutputWaitingOnItemNeedsAttention = TypedDict("DashboardNeighbourhoodOutputWaitingOnItemNeedsAttention", {
    "stage": Literal["needs_attention"],
    "requests": list[DashboardNeighbourhoodOutputWaitingOnItemNeedsAttentionRequestsItem],
})


DashboardNeighbourhoodOutputWaitingOnItemLeasedLease = TypedDict("DashboardNeighbourhoodOutputWaitingOnItemLeasedLease", {
    "id": str,
    "workerId": str,
    "epoch": int,
    "expiresAt": str,
})


DashboardNeighbourhoodOutputWaitingOnItemLeased = TypedDict("DashboardNeighbourhoodOutputWaitingOnItemLeased", {
    "stage": Literal["leased"],
    "lease": DashboardNeighbourhoodOutputWaitingOnItemLeasedLease | None,
})


DashboardNeighbourhoodOutputWaitingOnItemWaitingOnChildrenChildrenItem = TypedDict("DashboardNeighbourhoodOutputWaitingOnItemWaitingOnChildrenChildrenItem", {
    "id": str,
    "title": str,
    "stage": Stage,
})


DashboardNeighbourhoodOutputWaitingOnItemWaitingOnChildren = TypedDict("DashboardNeighbourhoodOutputWaitingOnItemWaitingOnChildren", {
    "stage": Literal["waiting_on_children"],
    "openChildCount": int,
    "children": list[DashboardNeighbourhoodOutputWaitingOnItemWaitingOnChildrenChildrenItem],
})


DashboardNeighbourhoodOutputWaitingOnItemBlockedDependenciesItem = TypedDict("DashboardNeighbourhoodOutputWaitingOnItemBlockedDependenciesItem", {
    "id": str,
    "title": str,
    "stage": Stage,
})


DashboardNeighbourhoodOutputWaitingOnItemBlockedAncestorBlockersItem = TypedDict("DashboardNeighbourhoodOutputWaitingOnItemBlockedAncestorBlockersItem", {
    "id": str,
    "title": str,
    "stage": Stage,
    "ancestorId": str,
})


DashboardNeighbourhoodOutputWaitingOnItemBlocked = TypedDict("DashboardNeighbourhoodOutputWaitingOnItemBlocked", {
    "stage": Literal["blocked"],
    "dependencies": list[DashboardNeighbourhoodOutputWaitingOnItemBlockedDependenciesItem],
    "ancestorBlockers": list[DashboardNeighbourhoodOutputWaitingOnItemBlockedAncestorBlockersItem],
})


DashboardNeighbourhoodOutputWaitingOnItemScheduled = TypedDict("DashboardNeighbourhoodOutputWaitingOnItemScheduled", {
    "stage": Literal["scheduled"],
    "notBefore": str,
})


DashboardNeighbourhoodOutput = TypedDict("DashboardNeighbourhoodOutput", {
    "ancestors": list[DashboardNeighbourhoodOutputAncestorsItem],
    "dependencies": list[DashboardNeighbourhoodOutputDependenciesItem],
    "dependents": list[DashboardNeighbourhoodOutputDependentsItem],
    "dependentCount": int,
    "children": list[DashboardNeighbourhoodOutputChildrenItem],
    "childCount": int,
    "ancestorBlockers": list[DashboardNeighbourhoodOutputAncestorBlockersItem],
    "waitingOn": list[DashboardNeighbourhoodOutputWaitingOnItemNeedsAttention | DashboardNeighbourhoodOutputWaitingOnItemLeased | DashboardNeighbourhoodOutputWaitingOnItemWaitingOnChildren | DashboardNeighbourhoodOutputWaitingOnItemBlocked | DashboardNeighbourhoodOutputWaitingOnItemScheduled],
})


DashboardActivityOutputBucketsItem = TypedDict("DashboardActivityOutputBucketsItem", {
    "start": str,
    "end": str,
    "claims": int,
    "releases": int,
    "expiries": int,
    "revocations": int,
    "attentionRequests": int,
    "readyToClaimP50": float | None,
    "readyToClaimP90": float | None,
    "attentionWaitP50": float | None,
    "attentionWaitP90": float | None,
})


DashboardActivityOutputTotals = TypedDict("DashboardActivityOutputTotals", {
    "claims": int,
    "releases": int,
    "expiries": int,
    "revocations": int,
    "attentionRequests": int,
    "readyToClaimP50": float | None,
    "readyToClaimP90": float | None,
    "attentionWaitP50": float | None,
    "attentionWaitP90": float | None,
})


DashboardActivityOutput = TypedDict("DashboardActivityOutput", {
    "range": Literal["hour", "day", "week"],
    "bucketSeconds": int,
    "from": str,
    "to": str,
    "buckets": list[DashboardActivityOutputBucketsItem],
    "totals": DashboardActivityOutputTotals,
})


TokensCreateOutput = TypedDict("TokensCreateOutput", {
    "id": str,
    "token": str,
})


TokensListOutput = list[Token]


TokensRevokeOutput = TypedDict("TokensRevokeOutput", {
    "id": str,
    "revokedAt": str,
})


WorkersListOutput = list[Worker]


WebhooksCreateOutput = TypedDict("WebhooksCreateOutput", {
    "id": str,
    "url": str,
    "events": list[str],
    "format": Literal["json", "slack", "slack_app", "github"],
    "label": str | None,
    "createdAt": str,
    "lastDeliveredAt": str | None,
    "failing": bool,
    "lastError": str | None,
    "secret": str,
})


WebhooksListOutput = list[Webhook]


WebhooksDeleteOutput = TypedDict("WebhooksDeleteOutput", {
    "id": str,
})


WebhooksDeliveriesOutput = list[Delivery]


LimitsDeleteOutput = TypedDict("LimitsDeleteOutput", {
    "key": str,
})


LimitsListOutput = list[Limit]


ProjectsListOutput = list[Project]


PeopleListOutput = list[Person]


PeopleMeOutputPerson = TypedDict("PeopleMeOutputPerson", {
    "id": str,
    "name": str,
})


PeopleMeOutput = TypedDict("PeopleMeOutput", {
    "person": PeopleMeOutputPerson | None,
    "role": Role,
    "actor": str,
})


PeopleCreateTokenOutput = TypedDict("PeopleCreateTokenOutput", {
    "id": str,
    "token": str,
})


PeopleTokensOutput = list[Token]


PeopleRevokeTokenOutput = TypedDict("PeopleRevokeTokenOutput", {
    "id": str,
    "revokedAt": str,
})


HealthCheckInput = dict[str, Any]


_WorkItemsCreateInputRequired = TypedDict("_WorkItemsCreateInputRequired", {
    "title": str,
})


class WorkItemsCreateInput(_WorkItemsCreateInputRequired, total=False):
    id: str
    description: str | None
    parentId: str | None
    dependsOn: list[str]
    priority: int
    idempotencyKey: str
    key: str
    projectId: str
    requires: list[str]
    concurrencyKey: str | None
    notBefore: str
    delaySeconds: int
    externalId: str


_WorkItemsImportInputRequired = TypedDict("_WorkItemsImportInputRequired", {
    "items": list[Any],
})


class WorkItemsImportInput(_WorkItemsImportInputRequired, total=False):
    projectId: str
    dryRun: bool
    idempotencyKey: str
    key: str


WorkItemsGetInput = TypedDict("WorkItemsGetInput", {
    "id": str,
})


WorkItemsListInput = TypedDict("WorkItemsListInput", {
    "stage": Stage | list[Stage],
    "parentId": str,
    "search": str,
    "limit": int,
    "cursor": str,
    "projectId": str,
    "externalId": str,
}, total=False)


WorkItemsQueueInput = TypedDict("WorkItemsQueueInput", {
    "limit": int,
    "workerId": str,
    "projectId": str,
    "capabilities": list[str],
}, total=False)


_WorkItemsAddDependencyInputRequired = TypedDict("_WorkItemsAddDependencyInputRequired", {
    "workItemId": str,
    "dependsOnId": str,
})


class WorkItemsAddDependencyInput(_WorkItemsAddDependencyInputRequired, total=False):
    idempotencyKey: str
    key: str


WorkItemsRemoveDependencyInput = TypedDict("WorkItemsRemoveDependencyInput", {
    "workItemId": str,
    "dependsOnId": str,
})


WorkItemsMoveInput = TypedDict("WorkItemsMoveInput", {
    "id": str,
    "parentId": str | None,
})


_WorkItemsUpdateInputRequired = TypedDict("_WorkItemsUpdateInputRequired", {
    "id": str,
})


class WorkItemsUpdateInput(_WorkItemsUpdateInputRequired, total=False):
    title: str
    description: str | None
    requires: list[str]
    concurrencyKey: str | None
    notBefore: str | None


WorkItemsSetPriorityInput = TypedDict("WorkItemsSetPriorityInput", {
    "id": str,
    "priority": int,
})


WorkItemsCancelInput = TypedDict("WorkItemsCancelInput", {
    "id": str,
    "reason": str,
})


LeasesClaimInput = TypedDict("LeasesClaimInput", {
    "workItemId": str,
    "parentId": str,
    "durationSeconds": int,
    "waitSeconds": float,
    "workerId": str,
    "idempotencyKey": str,
    "key": str,
    "projectId": str,
    "capabilities": list[str],
}, total=False)


_LeasesRenewInputRequired = TypedDict("_LeasesRenewInputRequired", {
    "leaseId": str,
    "epoch": int,
})


class LeasesRenewInput(_LeasesRenewInputRequired, total=False):
    workerId: str
    durationSeconds: int


_LeasesReleaseInputRequired = TypedDict("_LeasesReleaseInputRequired", {
    "leaseId": str,
    "epoch": int,
    "evidence": str,
})


class LeasesReleaseInput(_LeasesReleaseInputRequired, total=False):
    workerId: str
    links: list[str]


_LeasesCancelInputRequired = TypedDict("_LeasesCancelInputRequired", {
    "leaseId": str,
    "epoch": int,
    "reason": str,
})


class LeasesCancelInput(_LeasesCancelInputRequired, total=False):
    workerId: str


_LeasesHandBackInputRequired = TypedDict("_LeasesHandBackInputRequired", {
    "leaseId": str,
    "epoch": int,
    "reason": str,
})


class LeasesHandBackInput(_LeasesHandBackInputRequired, total=False):
    workerId: str
    retryAfterSeconds: int


_LeasesNoteInputRequired = TypedDict("_LeasesNoteInputRequired", {
    "leaseId": str,
    "epoch": int,
    "content": str,
})


class LeasesNoteInput(_LeasesNoteInputRequired, total=False):
    workerId: str
    idempotencyKey: str
    key: str


_LeasesDecomposeInputChildrenItemRequired = TypedDict("_LeasesDecomposeInputChildrenItemRequired", {
    "title": str,
})


class LeasesDecomposeInputChildrenItem(_LeasesDecomposeInputChildrenItemRequired, total=False):
    id: str
    description: str | None
    priority: int
    dependsOn: list[str]
    requires: list[str]
    concurrencyKey: str | None
    notBefore: str
    delaySeconds: int


_LeasesDecomposeInputRequired = TypedDict("_LeasesDecomposeInputRequired", {
    "leaseId": str,
    "epoch": int,
    "children": list[LeasesDecomposeInputChildrenItem],
})


class LeasesDecomposeInput(_LeasesDecomposeInputRequired, total=False):
    workerId: str
    claimChildId: str
    durationSeconds: int
    idempotencyKey: str
    key: str


LeasesRevokeInput = TypedDict("LeasesRevokeInput", {
    "leaseId": str,
    "epoch": int,
    "reason": str,
})


LeasesGetInput = TypedDict("LeasesGetInput", {
    "leaseId": str,
})


LeasesActiveInput = TypedDict("LeasesActiveInput", {
    "workerId": str,
    "limit": int,
    "after": str,
    "projectId": str,
}, total=False)


LeasesRecentInput = TypedDict("LeasesRecentInput", {
    "workerId": str,
    "limit": int,
}, total=False)


LeasesHistoryInput = TypedDict("LeasesHistoryInput", {
    "workItemId": str,
})


_AttentionRequestInputRequired = TypedDict("_AttentionRequestInputRequired", {
    "leaseId": str,
    "epoch": int,
    "kind": AttentionKind,
    "question": str,
})


class AttentionRequestInput(_AttentionRequestInputRequired, total=False):
    workerId: str
    context: str | None
    options: list[str]
    blocking: bool
    idempotencyKey: str
    key: str


_AttentionResolveInputRequired = TypedDict("_AttentionResolveInputRequired", {
    "id": str,
    "resolution": str,
})


class AttentionResolveInput(_AttentionResolveInputRequired, total=False):
    idempotencyKey: str
    key: str


AttentionListInput = TypedDict("AttentionListInput", {
    "status": Literal["open", "resolved"],
    "workItemId": str,
    "limit": int,
    "cursor": str,
    "projectId": str,
}, total=False)


AttentionGetInput = TypedDict("AttentionGetInput", {
    "id": str,
})


_AttentionWaitInputRequired = TypedDict("_AttentionWaitInputRequired", {
    "id": str,
})


class AttentionWaitInput(_AttentionWaitInputRequired, total=False):
    timeoutSeconds: float


_NotesListInputRequired = TypedDict("_NotesListInputRequired", {
    "workItemId": str,
})


class NotesListInput(_NotesListInputRequired, total=False):
    limit: int
    cursor: str
    order: Literal["asc", "desc"]


EventsListInput = TypedDict("EventsListInput", {
    "workItemId": str,
    "after": int,
    "before": int,
    "order": Literal["asc", "desc"],
    "limit": int,
    "projectId": str,
}, total=False)


EventsStreamInput = TypedDict("EventsStreamInput", {
    "after": int,
    "workItemId": str,
    "types": list[str],
    "lastEventId": str,
    "projectId": str,
}, total=False)


DashboardSummaryInput = TypedDict("DashboardSummaryInput", {
    "projectId": str,
}, total=False)


DashboardUnroutableInput = TypedDict("DashboardUnroutableInput", {
    "projectId": str,
    "limit": int,
}, total=False)


DashboardEndedLastHourInput = dict[str, Any]


_DashboardInboxInputRequired = TypedDict("_DashboardInboxInputRequired", {
    "status": Literal["open", "resolved"],
})


class DashboardInboxInput(_DashboardInboxInputRequired, total=False):
    limit: int
    projectId: str


DashboardNeighbourhoodInput = TypedDict("DashboardNeighbourhoodInput", {
    "id": str,
})


DashboardActivityInput = TypedDict("DashboardActivityInput", {
    "range": Literal["hour", "day", "week"],
}, total=False)


_TokensCreateInputRequired = TypedDict("_TokensCreateInputRequired", {
    "role": Role,
})


class TokensCreateInput(_TokensCreateInputRequired, total=False):
    workerId: str
    label: str
    projects: list[str]
    capabilities: list[str]


TokensListInput = dict[str, Any]


TokensRevokeInput = TypedDict("TokensRevokeInput", {
    "id": str,
})


WorkersListInput = dict[str, Any]


_WorkersDrainInputRequired = TypedDict("_WorkersDrainInputRequired", {
    "workerId": str,
})


class WorkersDrainInput(_WorkersDrainInputRequired, total=False):
    reason: str


WorkersUndrainInput = TypedDict("WorkersUndrainInput", {
    "workerId": str,
})


_WebhooksCreateInputRequired = TypedDict("_WebhooksCreateInputRequired", {
    "url": str,
})


class WebhooksCreateInput(_WebhooksCreateInputRequired, total=False):
    events: list[str]
    format: Literal["json", "slack"]
    label: str
    projectId: str


WebhooksListInput = dict[str, Any]


WebhooksDeleteInput = TypedDict("WebhooksDeleteInput", {
    "id": str,
})


_WebhooksDeliveriesInputRequired = TypedDict("_WebhooksDeliveriesInputRequired", {
    "webhookId": str,
})


class WebhooksDeliveriesInput(_WebhooksDeliveriesInputRequired, total=False):
    limit: int


WebhooksTestInput = TypedDict("WebhooksTestInput", {
    "id": str,
})


LimitsSetInput = TypedDict("LimitsSetInput", {
    "key": str,
    "maxLeases": int,
})


LimitsDeleteInput = TypedDict("LimitsDeleteInput", {
    "key": str,
})


LimitsListInput = dict[str, Any]


ProjectsCreateInput = TypedDict("ProjectsCreateInput", {
    "id": str,
    "name": str,
})


ProjectsListInput = dict[str, Any]


PeopleListInput = dict[str, Any]


PeopleDisableInput = TypedDict("PeopleDisableInput", {
    "id": str,
})


PeopleEnableInput = TypedDict("PeopleEnableInput", {
    "id": str,
})


PeopleMeInput = dict[str, Any]


PeopleCreateTokenInput = TypedDict("PeopleCreateTokenInput", {
    "label": str,
}, total=False)


PeopleTokensInput = TypedDict("PeopleTokensInput", {
    "personId": str,
}, total=False)


PeopleRevokeTokenInput = TypedDict("PeopleRevokeTokenInput", {
    "id": str,
})
