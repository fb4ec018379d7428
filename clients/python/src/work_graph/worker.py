"""run_worker: claim, renew in the background, stop the handler when the lease is lost, finish."""

from __future__ import annotations

import threading
import time
import uuid
from dataclasses import dataclass
from typing import Any, Callable, Union

from .client import Client
from .errors import Internal, LeaseNotCurrent, NetworkError, Unavailable, WorkerDrained, WorkGraphError
from ._types import AttentionKind, AttentionRequest, Lease, Note, WorkItem
from .types import Asked, Claim

# Answers worth asking again: nothing was written, or a replay with the same key is safe.
_TRANSIENT = (NetworkError, Unavailable, Internal)
_CLAIM_ATTEMPTS = 5


@dataclass(frozen=True)
class Release:
    """Handler result: the item is done (leases.release)."""

    evidence: str
    links: list[str] | None = None


@dataclass(frozen=True)
class Cancel:
    """Handler result: the item should not be done (leases.cancel)."""

    reason: str


@dataclass(frozen=True)
class HandBack:
    """Handler result: give the item back unfinished (leases.handBack)."""

    reason: str
    retry_after_seconds: int | None = None


HandlerResult = Union[Release, Cancel, HandBack, None]


class Job:
    """One claimed item, as the handler sees it.

    `lost` is set the moment the lease is no longer the worker's (a renewal was refused, or no
    renewal got through before the lease would have expired): the handler should stop, and
    nothing it returns is written. `lost_error` says why.
    """

    def __init__(self, client: Client, claim: Claim) -> None:
        self._client = client
        self.lease: Lease = claim["lease"]
        self.work_item: WorkItem = claim["workItem"]
        self.attention: list[AttentionRequest] = claim["attention"]
        self.lost = threading.Event()
        self.lost_error: WorkGraphError | None = None
        self.ended = False

    def lose(self, error: WorkGraphError) -> None:
        if not self.lost.is_set():
            self.lost_error = error
            self.lost.set()

    def _guard(self) -> None:
        if self.lost_error is not None:
            raise self.lost_error
        if self.ended:
            raise LeaseNotCurrent("this job's lease has ended", detail={"kind": "ended", "local": True})

    def _fenced(self, call: Callable[[], Any]) -> Any:
        self._guard()
        try:
            return call()
        except LeaseNotCurrent as error:
            self.lose(error)
            raise

    def note(self, content: str) -> Note:
        """leases.note under this job's lease; raises LeaseNotCurrent, without sending, once the lease is lost."""
        key = str(uuid.uuid4())
        result: Note = self._fenced(lambda: self._client.note(self.lease, content, idempotency_key=key))
        return result

    def ask(self, question: str, *, kind: AttentionKind = "decision", options: list[str] | None = None, context: str | None = None, blocking: bool = True) -> Asked:
        """attention.request; a blocking request ends the lease, and then the handler's result is not written."""
        key = str(uuid.uuid4())
        asked: Asked = self._fenced(lambda: self._client.ask(self.lease, question, kind=kind, options=options, context=context, blocking=blocking, idempotency_key=key))
        if asked["endedLease"] is not None:
            self.ended = True
        return asked


Handler = Callable[[Job], HandlerResult]


@dataclass
class WorkerSummary:
    claimed: int = 0
    released: int = 0
    cancelled: int = 0
    handed_back: int = 0
    asked: int = 0
    lost: int = 0
    handler_errors: int = 0
    stopped_by: str = ""


def _renew_until(client: Client, job: Job, duration_seconds: int, interval: float, requested_at: float, done: threading.Event) -> None:
    """The renewal thread: renews every `interval`; sets `job.lost` on a refusal, or when no renewal got through in time.

    The local expiry counts from when the lease (or renewal) was requested, so it can only be early.
    """
    expires = requested_at + duration_seconds
    wait = interval
    while not done.wait(max(0.0, min(wait, expires - time.monotonic()))):
        if time.monotonic() >= expires:
            job.lose(LeaseNotCurrent("no renewal got through before the lease would expire", detail={"kind": "expired", "local": True}))
            return
        sent = time.monotonic()
        try:
            job.lease = client.mutation(
                "leases.renew",
                {"leaseId": job.lease["id"], "epoch": job.lease["epoch"], "durationSeconds": duration_seconds},
                timeout=max(1.0, expires - sent),
            )
            expires, wait = sent + duration_seconds, interval
        except _TRANSIENT:
            wait = 1.0
        except WorkGraphError as error:
            job.lose(error)
            return


def _claim(client: Client, *, stop: threading.Event, **options: Any) -> Claim | None:
    """A claim with one idempotency key, retried on transient failures: a lost answer replays the same lease."""
    key = str(uuid.uuid4())
    for attempt in range(_CLAIM_ATTEMPTS):
        try:
            return client.claim(idempotency_key=key, **options)
        except _TRANSIENT:
            if attempt == _CLAIM_ATTEMPTS - 1 or stop.wait(min(8.0, 0.5 * 2**attempt)):
                raise
    return None


def _finish(client: Client, job: Job, result: HandlerResult, summary: WorkerSummary) -> None:
    try:
        if isinstance(result, Release):
            client.release(job.lease, result.evidence, result.links)
            summary.released += 1
        elif isinstance(result, Cancel):
            client.cancel(job.lease, result.reason)
            summary.cancelled += 1
        else:
            reason = result.reason if isinstance(result, HandBack) else "the handler returned no result"
            client.hand_back(job.lease, reason, result.retry_after_seconds if isinstance(result, HandBack) else None)
            summary.handed_back += 1
    except LeaseNotCurrent:
        summary.lost += 1


def run_worker(
    client: Client,
    handler: Handler,
    *,
    duration_seconds: int = 300,
    wait_seconds: float = 20,
    project_id: str | None = None,
    capabilities: list[str] | None = None,
    max_items: int | None = None,
    stop_when_idle: bool = False,
    stop: threading.Event | None = None,
    renew_every: float | None = None,
) -> WorkerSummary:
    """Claims items one at a time and runs `handler` on each until `stop` is set (or `max_items`, or idle).

    While the handler runs, a thread renews the lease every `renew_every` seconds (a third of
    `duration_seconds` by default). When the lease is lost, `job.lost` is set: the handler
    should return, and its result is not written. The handler's result releases (Release),
    cancels (Cancel) or hands the item back (HandBack, or None); an exception in the handler
    hands the item back with the error's text.
    """
    stop = stop or threading.Event()
    summary = WorkerSummary()
    interval = renew_every if renew_every is not None else duration_seconds / 3
    while True:
        if stop.is_set():
            summary.stopped_by = "stop"
            break
        if max_items is not None and summary.claimed >= max_items:
            summary.stopped_by = "max_items"
            break
        requested_at = time.monotonic()
        try:
            claim = _claim(
                client, stop=stop, project_id=project_id, capabilities=capabilities,
                duration_seconds=duration_seconds, wait_seconds=wait_seconds,
            )
        except WorkerDrained:
            summary.stopped_by = "drained"
            break
        if claim is None:
            if stop_when_idle:
                summary.stopped_by = "idle"
                break
            if wait_seconds == 0:
                stop.wait(1.0)
            continue
        summary.claimed += 1
        job = Job(client, claim)
        done = threading.Event()
        renewer = threading.Thread(target=_renew_until, args=(client, job, duration_seconds, interval, requested_at, done), daemon=True)
        renewer.start()
        try:
            result = handler(job)
        except Exception as error:  # noqa: BLE001 — any handler failure hands the item back
            summary.handler_errors += 1
            result = HandBack(f"the handler raised {type(error).__name__}: {error}"[:10_000])
        finally:
            done.set()
            renewer.join()
        if job.lost.is_set():
            summary.lost += 1
        elif job.ended:
            summary.asked += 1
        else:
            _finish(client, job, result, summary)
    return summary
