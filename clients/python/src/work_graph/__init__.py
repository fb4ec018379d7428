"""Work Graph's Python client: `Client` (one method per agent procedure) and `run_worker`."""

from .client import Client
from .errors import (
    AlreadyResolved,
    AlreadyTerminal,
    DependencyCycle,
    Duplicate,
    Forbidden,
    IdempotencyKeyReused,
    Internal,
    ItemLeased,
    LeaseNotCurrent,
    LimitReached,
    NetworkError,
    NotClaimable,
    NotFound,
    TooLarge,
    Unauthenticated,
    Unavailable,
    Validation,
    WorkerDrained,
    WorkGraphError,
)
from ._types import AttentionRequest, Lease, Note, WorkItem
from .types import Claim
from .worker import Cancel, HandBack, Job, Release, WorkerSummary, run_worker

__all__ = [
    "AlreadyResolved", "AlreadyTerminal", "AttentionRequest", "Cancel", "Claim", "Client", "DependencyCycle", "Duplicate",
    "Forbidden", "HandBack", "IdempotencyKeyReused", "Internal", "ItemLeased", "Job", "Lease", "LeaseNotCurrent",
    "LimitReached", "NetworkError", "NotClaimable", "NotFound", "Note", "Release", "TooLarge", "Unauthenticated",
    "Unavailable", "Validation", "WorkGraphError", "WorkItem", "WorkerDrained", "WorkerSummary", "run_worker",
]
