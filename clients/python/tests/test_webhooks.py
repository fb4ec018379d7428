from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from standardwebhooks import Webhook, WebhookVerificationError

from work_graph import Client

Received = tuple[dict[str, str], bytes]


@pytest.fixture()
def receiver() -> Iterator[tuple[str, "queue.Queue[Received]"]]:
    """A real HTTP receiver on 127.0.0.1 that records each request's headers and raw body."""
    received: queue.Queue[Received] = queue.Queue()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("content-length", "0")))
            received.put(({key.lower(): value for key, value in self.headers.items()}, body))
            self.send_response(204)
            self.end_headers()

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/hook", received
    server.shutdown()
    server.server_close()


def test_a_delivery_verifies_with_the_standardwebhooks_library(
    admin: Client, project: str, create_item: Callable[..., str], receiver: tuple[str, "queue.Queue[Received]"]
) -> None:
    url, received = receiver
    hook = admin.mutation("webhooks.create", {"url": url, "events": ["work_item.created"], "projectId": project})
    item_id = create_item("Tell the receiver")
    headers, body = received.get(timeout=30)

    payload = Webhook(hook["secret"]).verify(body, headers)
    assert payload["workItemId"] == item_id
    assert headers["webhook-id"] == headers["x-work-graph-delivery"]

    other = admin.mutation("webhooks.create", {"url": url, "events": ["nothing.matches"]})
    with pytest.raises(WebhookVerificationError):
        Webhook(other["secret"]).verify(body, headers)
    with pytest.raises(WebhookVerificationError):
        Webhook(hook["secret"]).verify(body.replace(b"Tell", b"Fool"), headers)
