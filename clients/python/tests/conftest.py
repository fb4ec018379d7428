"""Fixtures: a Work Graph server started by tests/python/client.test.ts (WORK_GRAPH_URL, WORK_GRAPH_ADMIN_TOKEN)."""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterator

import pytest

from work_graph import Client


@pytest.fixture(scope="session")
def url() -> str:
    return os.environ["WORK_GRAPH_URL"]


@pytest.fixture(scope="session")
def admin(url: str) -> Iterator[Client]:
    with Client(url, os.environ["WORK_GRAPH_ADMIN_TOKEN"]) as client:
        yield client


@pytest.fixture()
def project(admin: Client) -> str:
    """A project of the test's own: its agents see only its items, so tests do not take each other's work."""
    project_id = f"py-{uuid.uuid4().hex[:12]}"
    admin.mutation("projects.create", {"id": project_id, "name": project_id})
    return project_id


def _token(admin: Client, **input: object) -> str:
    token: str = admin.mutation("tokens.create", dict(input))["token"]
    return token


@pytest.fixture()
def operator(url: str, admin: Client) -> Iterator[Client]:
    with Client(url, _token(admin, role="operator")) as client:
        yield client


@pytest.fixture()
def agent(url: str, admin: Client, project: str) -> Iterator[Callable[[str], Client]]:
    """Agent clients by worker id, each with a token scoped to the test's project."""
    clients: list[Client] = []

    def make(worker: str) -> Client:
        client = Client(url, _token(admin, role="agent", workerId=f"{project}-{worker}", projects=[project]))
        clients.append(client)
        return client

    yield make
    for client in clients:
        client.close()


@pytest.fixture()
def create_item(operator: Client, project: str) -> Callable[..., str]:
    def create(title: str, **fields: object) -> str:
        item_id: str = operator.mutation("workItems.create", {"title": title, "projectId": project, **fields})["id"]
        return item_id

    return create
