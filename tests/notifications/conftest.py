"""Shared by the notifications tests: a real receiver on loopback that checks signatures the way
a receiver would (`standardwebhooks`), a server on the embedded default whose beat sends
quickly, and endpoints that are removed after each test."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from django.conf import settings
from standardwebhooks import Webhook

from approvals.models import Elicitation
from approvals.services.staff import elicitation_end_by_staff
from mcpsite.actors import Actor, Via
from mcpsite.models import Tenant
from notifications import services
from notifications.models import Delivery, Endpoint
from tests.approvals.conftest import CallInThread, elicitation_id_of
from tests.conftest import Cast, LiveServer

# The server's notification settings: quick ticks, short timeouts, few attempts.
TIMEOUT_SECONDS = 1.0
MAX_ATTEMPTS = 3
BACKOFF_BASE_SECONDS = 1.0
SEND_EVERY_SECONDS = 0.2

HANG = "hang"  # an answer: keep the connection open, send nothing, for longer than any timeout
HANG_SECONDS = 6 * TIMEOUT_SECONDS


@dataclass
class Received:
    headers: dict[str, str]
    body: bytes
    at: float  # time.monotonic()


@dataclass
class Receiver:
    """A real HTTP receiver on loopback (127.0.0.1 unless told), in a thread: records every POST and answers each with
    the next of `answers` (a status code or `HANG`), then `default`."""

    answers: list[int | str] = field(default_factory=list)
    default: int | str = 200
    redirect_to: str = ""  # the Location of a 3xx answer
    host: str = "127.0.0.1"  # any loopback address
    port: int = 0  # 0: any free port
    received: list[Received] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _server: ThreadingHTTPServer | None = None

    def start(self) -> Receiver:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                with receiver._lock:
                    receiver.received.append(Received(dict(self.headers.items()), body, time.monotonic()))
                    answer = receiver.answers.pop(0) if receiver.answers else receiver.default
                if answer == HANG:
                    time.sleep(HANG_SECONDS)
                    return
                self.send_response(int(answer))
                if 300 <= int(answer) < 400 and receiver.redirect_to:
                    self.send_header("Location", receiver.redirect_to)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer((self.host, self.port), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    @property
    def url(self) -> str:
        assert self._server is not None
        return f"http://{self.host}:{self._server.server_address[1]}/hooks"

    def wait_for(self, count: int, timeout: float = 15.0) -> list[Received]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self._lock:
                if len(self.received) >= count:
                    return list(self.received)
            time.sleep(0.05)
        raise AssertionError(f"{len(self.received)} of {count} notifications arrived within {timeout}s")


def verify(secret: str, received: Received) -> Any:
    """What a receiver does: check the Standard Webhooks signature, get the event."""
    return Webhook(secret).verify(received.body, received.headers)


@pytest.fixture
def receiver_factory() -> Iterator[Callable[..., Receiver]]:
    started: list[Receiver] = []

    def make(**kwargs: Any) -> Receiver:
        receiver = Receiver(**kwargs).start()
        started.append(receiver)
        return receiver

    yield make
    for receiver in started:
        receiver.stop()


@pytest.fixture(autouse=True)
def loopback_allowed(monkeypatch: pytest.MonkeyPatch) -> None:
    """In this process too (it creates the endpoints): the receivers listen on 127.0.0.1."""
    monkeypatch.setitem(settings.NOTIFICATIONS, "ALLOW_LOOPBACK", True)


@pytest.fixture
def endpoint_factory(cast: Cast) -> Iterator[Callable[..., Endpoint]]:
    """Endpoints made through the service, removed after the test (with their deliveries)."""
    made: list[int] = []

    def make(receiver: Receiver, types: list[str], slug: str | None = "demo") -> Endpoint:
        tenant = Tenant.objects.get(slug=slug) if slug else None
        endpoint = services.endpoint_create(url=receiver.url, event_types=types, tenant=tenant)
        made.append(endpoint.pk)
        return endpoint

    yield make
    for endpoint in Endpoint.objects.filter(pk__in=made):
        services.endpoint_delete(endpoint=endpoint)


@pytest.fixture(scope="package")
def payments_enabled(django_db_setup: None, django_db_blocker: Any) -> Iterator[None]:
    """`demo` and `other` serve `payments` (request_refund) while these tests run; put back after."""
    with django_db_blocker.unblock():
        before = {t.slug: list(t.toolsets) for t in Tenant.objects.filter(slug__in=["demo", "other"])}
        for tenant in Tenant.objects.filter(slug__in=before):
            tenant.toolsets = [*before[tenant.slug], *(["payments"] if "payments" not in before[tenant.slug] else [])]
            tenant.save()
    yield
    with django_db_blocker.unblock():
        for tenant in Tenant.objects.filter(slug__in=before):
            tenant.toolsets = before[tenant.slug]
            tenant.save()


@pytest.fixture(scope="package")
def server(server_factory: Callable[..., LiveServer], payments_enabled: None) -> Iterator[LiveServer]:
    """The embedded default (no Redis: eager Celery, the in-process beat), as most installs run:
    delivery must still never run on a request's thread."""
    server = server_factory(
        MCPSITE_REDIS_URL="",
        MCPSITE_APPROVALS_HOLD_SECONDS="2",
        MCPSITE_NOTIFICATIONS_ALLOW_LOOPBACK="1",
        MCPSITE_NOTIFICATIONS_TIMEOUT_SECONDS=str(TIMEOUT_SECONDS),
        MCPSITE_NOTIFICATIONS_MAX_ATTEMPTS=str(MAX_ATTEMPTS),
        MCPSITE_NOTIFICATIONS_BACKOFF_BASE_SECONDS=str(BACKOFF_BASE_SECONDS),
        MCPSITE_NOTIFICATIONS_SEND_EVERY_SECONDS=str(SEND_EVERY_SECONDS),
    )
    yield server
    server.stop()


@dataclass
class Refund:
    call: CallInThread
    row: Elicitation
    asked_in: float  # seconds from the call's start until the client was shown the URL


def ask_refund(server: LiveServer, cast: Cast, order_id: str, user: str = "alice", slug: str = "demo") -> Refund:
    """A real client calls request_refund (2026-07-28); returns once it was asked to open the URL."""
    started = time.monotonic()
    call = CallInThread(
        server.mcp_url(slug),
        cast.token(server, user, slug),
        "2026-07-28",
        "request_refund",
        {"order_id": order_id, "amount": "12.5"},
    ).start()
    question = call.next_question()
    asked_in = time.monotonic() - started
    return Refund(call, Elicitation.objects.get(pk=elicitation_id_of(question.url)), asked_in)


def settle(refund: Refund, cast: Cast) -> None:
    """Deny the refund, so the waiting call ends (and holds no round open)."""
    elicitation_end_by_staff(
        elicitation=refund.row, action="deny", actor=Actor(Via.STAFF, cast.user("staff")), note="test"
    )
    refund.call.join()


def wait_for_status(delivery: Delivery, status: str, timeout: float = 20.0) -> Delivery:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        delivery.refresh_from_db()
        if delivery.status == status:
            return delivery
        time.sleep(0.1)
    raise AssertionError(f"{delivery.pk} is {delivery.status} after {timeout}s, not {status}")
