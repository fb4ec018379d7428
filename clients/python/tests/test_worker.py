from __future__ import annotations

import threading
from collections.abc import Callable

import pytest

from work_graph import Client, Job, LeaseNotCurrent, Release, run_worker


def test_run_worker_claims_and_releases_until_idle(agent: Callable[[str], Client], create_item: Callable[..., str], operator: Client) -> None:
    ids = [create_item("First", priority=2), create_item("Second", priority=1)]
    seen: list[str] = []

    def handler(job: Job) -> Release:
        seen.append(job.work_item["id"])
        job.note(f"working on {job.work_item['title']}")
        return Release(f"did {job.work_item['title']}")

    summary = agent("loop").run_worker(handler, duration_seconds=30, wait_seconds=1, stop_when_idle=True)
    assert seen == ids
    assert (summary.claimed, summary.released, summary.lost, summary.stopped_by) == (2, 2, 0, "idle")
    for item_id in ids:
        assert operator.query("workItems.get", {"id": item_id})["stage"] == "released"


def test_the_renewal_thread_keeps_the_lease_past_its_duration(agent: Callable[[str], Client], create_item: Callable[..., str], operator: Client) -> None:
    item_id = create_item("Takes longer than one lease")

    def handler(job: Job) -> Release:
        assert not job.lost.wait(8)
        return Release("outlived the lease's duration")

    summary = run_worker(agent("long"), handler, duration_seconds=5, renew_every=0.5, wait_seconds=1, max_items=1)
    assert (summary.released, summary.lost) == (1, 0)
    assert operator.query("workItems.get", {"id": item_id})["stage"] == "released"


def test_a_lost_lease_signals_the_handler_and_its_result_is_not_written(
    agent: Callable[[str], Client], create_item: Callable[..., str], operator: Client
) -> None:
    item_id = create_item("Revoked while working")
    claimed = threading.Event()
    jobs: list[Job] = []

    def handler(job: Job) -> Release:
        jobs.append(job)
        claimed.set()
        assert job.lost.wait(30), "the renewal thread should have noticed the revocation"
        return Release("finished anyway")

    def revoke() -> None:
        assert claimed.wait(30)
        lease = jobs[0].lease
        operator.mutation("leases.revoke", {"leaseId": lease["id"], "epoch": lease["epoch"], "reason": "reassigning"})

    revoker = threading.Thread(target=revoke)
    revoker.start()
    summary = run_worker(agent("revoked"), handler, duration_seconds=20, renew_every=0.3, wait_seconds=1, max_items=1)
    revoker.join()

    assert (summary.claimed, summary.released, summary.lost) == (1, 0, 1)
    job = jobs[0]
    assert isinstance(job.lost_error, LeaseNotCurrent)
    assert job.lost_error.detail["kind"] == "revoked"
    with pytest.raises(LeaseNotCurrent):
        job.note("too late")
    item = operator.query("workItems.get", {"id": item_id})
    assert item["stage"] == "ready"
    assert operator.query("notes.list", {"workItemId": item_id})["items"] == []


def test_a_handler_that_raises_hands_the_item_back_with_the_error(
    agent: Callable[[str], Client], create_item: Callable[..., str], operator: Client
) -> None:
    item_id = create_item("Breaks the handler")

    def handler(job: Job) -> Release:
        raise RuntimeError("disk full")

    summary = run_worker(agent("broken"), handler, duration_seconds=30, wait_seconds=1, max_items=1)
    assert (summary.claimed, summary.handler_errors, summary.handed_back, summary.released) == (1, 1, 1, 0)
    [lease] = operator.query("leases.history", {"workItemId": item_id})
    assert lease["outcome"] == "returned"
    assert operator.query("workItems.get", {"id": item_id})["stage"] == "ready"
