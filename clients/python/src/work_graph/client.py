"""Client: one method per agent procedure of docs/api.md, over plain HTTP (tRPC without a transformer)."""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, Any, cast

import httpx

from .errors import NetworkError, error_from_reply
from ._types import AttentionKind, AttentionRequest, Lease, Note, WorkItem
from .types import Asked, Claim, Finished

if TYPE_CHECKING:
    from .worker import Handler, WorkerSummary

# attention.wait holds a request at most this long (docs/api.md).
_MAX_SERVER_WAIT_SECONDS = 60


def _without_none(values: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in values.items() if value is not None}


def _lease_ref(lease: Lease) -> dict[str, Any]:
    return {"leaseId": lease["id"], "epoch": lease["epoch"]}


class Client:
    """A Work Graph API client for one token (an agent token for the lease calls).

    Every call raises a WorkGraphError subclass named after the refusal's reason
    (LeaseNotCurrent, NotClaimable, …) or NetworkError when no answer came.
    """

    def __init__(self, url: str, token: str, *, timeout: float = 30.0, transport: httpx.BaseTransport | None = None) -> None:
        self.url = url.rstrip("/")
        self._timeout = timeout
        self._http = httpx.Client(
            base_url=f"{self.url}/api/trpc/",
            headers={"authorization": f"Bearer {token}", "user-agent": "work-graph-python"},
            timeout=timeout,
            transport=transport,
        )

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def run_worker(self, handler: Handler, **options: Any) -> WorkerSummary:
        """`run_worker(self, handler, **options)`: the worker loop of work_graph.run_worker with this client."""
        from .worker import run_worker

        return run_worker(self, handler, **options)

    def query(self, procedure: str, input: dict[str, Any] | None = None, *, timeout: float | None = None) -> Any:
        """Any query procedure: GET /api/trpc/<procedure>?input=<JSON>."""
        params = {"input": json.dumps(input)} if input is not None else None
        return self._send("GET", procedure, params=params, timeout=timeout)

    def mutation(self, procedure: str, input: dict[str, Any] | None = None, *, timeout: float | None = None) -> Any:
        """Any mutation procedure: POST /api/trpc/<procedure> with the input as the JSON body."""
        return self._send("POST", procedure, body=input or {}, timeout=timeout)

    def _send(self, method: str, procedure: str, *, params: dict[str, str] | None = None, body: Any = None, timeout: float | None) -> Any:
        try:
            response = self._http.request(method, procedure, params=params, json=body, timeout=timeout if timeout is not None else self._timeout)
        except httpx.HTTPError as error:
            raise NetworkError(f"{procedure}: no answer ({type(error).__name__}: {error})") from error
        try:
            reply = response.json()
        except ValueError:
            reply = None
        if response.is_success and isinstance(reply, dict) and "result" in reply:
            return reply["result"].get("data")
        raise error_from_reply(response.status_code, reply)

    # Claiming and the lease lifecycle (docs/agents.md "The lease lifecycle").

    def claim(
        self,
        *,
        work_item_id: str | None = None,
        parent_id: str | None = None,
        project_id: str | None = None,
        capabilities: list[str] | None = None,
        duration_seconds: int = 900,
        wait_seconds: float = 0,
        idempotency_key: str | None = None,
    ) -> Claim | None:
        """leases.claim: the next ready item (or a named one), or None when nothing became ready within `wait_seconds` (≤ 60)."""
        input = _without_none({
            "workItemId": work_item_id, "parentId": parent_id, "projectId": project_id, "capabilities": capabilities,
            "durationSeconds": duration_seconds, "waitSeconds": wait_seconds, "idempotencyKey": idempotency_key,
        })
        return cast("Claim | None", self.mutation("leases.claim", input, timeout=self._timeout + wait_seconds))

    def renew(self, lease: Lease, duration_seconds: int = 900) -> Lease:
        """leases.renew: the lease with its new expiry (database now + duration)."""
        return cast(Lease, self.mutation("leases.renew", {**_lease_ref(lease), "durationSeconds": duration_seconds}))

    def release(self, lease: Lease, evidence: str, links: list[str] | None = None) -> Finished:
        """leases.release: the item is done; `evidence` says how you know."""
        return cast(Finished, self.mutation("leases.release", _without_none({**_lease_ref(lease), "evidence": evidence, "links": links})))

    def cancel(self, lease: Lease, reason: str) -> Finished:
        """leases.cancel: the item should not be done."""
        return cast(Finished, self.mutation("leases.cancel", {**_lease_ref(lease), "reason": reason}))

    def hand_back(self, lease: Lease, reason: str, retry_after_seconds: int | None = None) -> Finished:
        """leases.handBack: give the item back unfinished (ready again at once, or after `retry_after_seconds`)."""
        input = _without_none({**_lease_ref(lease), "reason": reason, "retryAfterSeconds": retry_after_seconds})
        return cast(Finished, self.mutation("leases.handBack", input))

    def note(self, lease: Lease, content: str, idempotency_key: str | None = None) -> Note:
        """leases.note: progress the next worker reads."""
        input = _without_none({**_lease_ref(lease), "content": content, "idempotencyKey": idempotency_key})
        return cast(Note, self.mutation("leases.note", input))

    def ask(
        self,
        lease: Lease,
        question: str,
        *,
        kind: AttentionKind = "decision",
        options: list[str] | None = None,
        context: str | None = None,
        blocking: bool = True,
        idempotency_key: str | None = None,
    ) -> Asked:
        """attention.request: ask a human. A blocking request ends the lease (`endedLease`)."""
        input = _without_none({
            **_lease_ref(lease), "kind": kind, "question": question, "options": options, "context": context,
            "blocking": blocking, "idempotencyKey": idempotency_key,
        })
        return cast(Asked, self.mutation("attention.request", input))

    def wait_for_answer(self, request_id: str, timeout_seconds: float = 3600) -> AttentionRequest:
        """attention.wait until the request is resolved or `timeout_seconds` passed; the request as it is then."""
        deadline = time.monotonic() + timeout_seconds
        while True:
            left = deadline - time.monotonic()
            wait = max(1, min(_MAX_SERVER_WAIT_SECONDS, int(left)))
            request = cast(AttentionRequest, self.query("attention.wait", {"id": request_id, "timeoutSeconds": wait}, timeout=self._timeout + wait))
            if request["status"] == "resolved" or time.monotonic() >= deadline:
                return request

    def queue(self, *, limit: int = 50, project_id: str | None = None, capabilities: list[str] | None = None) -> list[WorkItem]:
        """workItems.queue: ready items in the order this worker's next claims would take them."""
        input = _without_none({"limit": limit, "projectId": project_id, "capabilities": capabilities})
        return cast("list[WorkItem]", self.query("workItems.queue", input))

    def get_lease(self, lease_id: str) -> Lease:
        return cast(Lease, self.query("leases.get", {"leaseId": lease_id}))

    def get_work_item(self, work_item_id: str) -> WorkItem:
        return cast(WorkItem, self.query("workItems.get", {"id": work_item_id}))
