from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

from work_graph import Client, LeaseNotCurrent, NotClaimable, NotFound, Unauthenticated, Validation


def notes_of(operator: Client, item_id: str) -> list[str]:
    page: dict[str, Any] = operator.query("notes.list", {"workItemId": item_id})
    return [note["content"] for note in page["items"]]


def test_claim_note_renew_release(agent: Callable[[str], Client], create_item: Callable[..., str], operator: Client) -> None:
    worker = agent("a")
    item_id = create_item("Write the report")
    assert [item["id"] for item in worker.queue()] == [item_id]

    claim = worker.claim(duration_seconds=60)
    assert claim is not None
    assert claim["workItem"]["id"] == item_id
    assert claim["lease"]["epoch"] == 1
    assert claim["workItem"]["stage"] == "leased"

    note = worker.note(claim["lease"], "half way")
    assert note["content"] == "half way"
    renewed = worker.renew(claim["lease"], 120)
    assert renewed["expiresAt"] > claim["lease"]["expiresAt"]

    finished = worker.release(claim["lease"], "sent to the team", ["https://example.com/report"])
    assert finished["workItem"]["stage"] == "released"
    assert finished["lease"]["outcome"] == "released"
    assert notes_of(operator, item_id) == ["half way"]
    assert worker.claim() is None


def test_a_waiting_claim_returns_when_an_item_is_created(agent: Callable[[str], Client], create_item: Callable[..., str]) -> None:
    worker = agent("waiter")
    created: list[str] = []
    timer = threading.Timer(0.5, lambda: created.append(create_item("Arrives later")))
    started = time.monotonic()
    timer.start()
    claim = worker.claim(wait_seconds=20)
    timer.join()
    assert claim is not None
    assert claim["workItem"]["id"] == created[0]
    assert time.monotonic() - started < 15


def test_refusals_raise_the_exception_of_their_reason(url: str, agent: Callable[[str], Client], create_item: Callable[..., str]) -> None:
    first, second = agent("first"), agent("second")
    item_id = create_item("Only one may hold it")
    assert first.claim(work_item_id=item_id) is not None
    with pytest.raises(NotClaimable) as refused:
        second.claim(work_item_id=item_id)
    assert refused.value.detail["stage"] == "leased"
    assert refused.value.status == 409
    with pytest.raises(NotFound):
        first.get_work_item("no-such-item")
    with pytest.raises(Validation):
        first.claim(duration_seconds=0)
    with Client(url, "wga_not-a-token") as stranger, pytest.raises(Unauthenticated):
        stranger.queue()


def test_fencing_a_takeover_after_expiry_makes_the_old_clients_writes_fail_and_change_nothing(
    agent: Callable[[str], Client], create_item: Callable[..., str], operator: Client
) -> None:
    old, new = agent("old"), agent("new")
    item_id = create_item("Fenced")
    stale = old.claim(duration_seconds=60)
    assert stale is not None
    old.note(stale["lease"], "before expiry")
    old.renew(stale["lease"], 1)  # now it expires a second from now (database clock)

    # The new worker's claim waits on the server until the old lease expires (database clock).
    takeover = new.claim(wait_seconds=30)
    assert takeover is not None
    assert takeover["workItem"]["id"] == item_id
    assert takeover["lease"]["epoch"] == 2

    with pytest.raises(LeaseNotCurrent) as fenced:
        old.note(stale["lease"], "written after losing the lease")
    assert fenced.value.detail["kind"] == "superseded"
    with pytest.raises(LeaseNotCurrent):
        old.release(stale["lease"], "done, I think")
    with pytest.raises(LeaseNotCurrent):
        old.renew(stale["lease"], 60)

    assert notes_of(operator, item_id) == ["before expiry"]
    item = operator.query("workItems.get", {"id": item_id})
    assert item["stage"] == "leased"
    assert item["currentLease"]["epoch"] == 2
    assert item["currentLease"]["workerId"].endswith("-new")


def test_ask_and_wait_for_the_answer(agent: Callable[[str], Client], create_item: Callable[..., str], operator: Client) -> None:
    worker = agent("asker")
    create_item("Needs a decision")
    claim = worker.claim()
    assert claim is not None
    asked = worker.ask(claim["lease"], "Blue or green?", options=["blue", "green"])
    assert asked["endedLease"] is not None and asked["endedLease"]["outcome"] == "attention_requested"
    request_id = asked["request"]["id"]

    timer = threading.Timer(0.5, lambda: operator.mutation("attention.resolve", {"id": request_id, "resolution": "green"}))
    timer.start()
    answered = worker.wait_for_answer(request_id, timeout_seconds=30)
    timer.join()
    assert answered["status"] == "resolved"
    assert answered["resolution"] == "green"

    again = worker.claim()
    assert again is not None
    assert [request["resolution"] for request in again["attention"]] == ["green"]


def test_hand_back(agent: Callable[[str], Client], create_item: Callable[..., str]) -> None:
    worker, other = agent("giver"), agent("taker")
    item_id = create_item("Not for me")
    claim = worker.claim()
    assert claim is not None
    handed = worker.hand_back(claim["lease"], "no access to staging")
    assert handed["lease"]["outcome"] == "returned"
    retaken = other.claim()
    assert retaken is not None and retaken["workItem"]["id"] == item_id
