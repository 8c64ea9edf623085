"""Shared by the approvals tests: the demo tenant with the `payments` toolset, a server with short
waits, a client that runs in its own thread (so Playwright and the ORM stay on the test's
thread), and signed sandbox webhooks."""

from __future__ import annotations

import datetime
import queue
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

import anyio
import httpx2
import pytest
from django.contrib.admin.utils import quote
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp_types import (
    URL_ELICITATION_REQUIRED,
    ElicitCompleteNotification,
    ElicitRequestParams,
    ElicitRequestURLParams,
    ElicitResult,
)

from approvals.models import Elicitation
from approvals.providers.sandbox import checkout_completed_event, signed_delivery
from approvals.services.opening import PaymentTerms, elicitation_open
from demo.models import Booking
from mcpsite.models import Tenant
from tests.conftest import LiveServer
from tools_app.principal import ANONYMOUS, Principal

# Short waits so each test takes seconds: a held round answers within HOLD, a legacy call
# waits in-call for LEGACY_WAIT before it answers -32042.
HOLD_SECONDS = "2"
LEGACY_WAIT_SECONDS = "15"


@pytest.fixture(scope="package", autouse=True)
def payments_enabled(django_db_setup: None, django_db_blocker: Any) -> Iterator[None]:
    """The demo tenant serves the `payments` toolset (as seed_demo sets it up) while these tests
    run, and is put back afterwards for the tests that list the demo tools exactly."""
    with django_db_blocker.unblock():
        demo = Tenant.objects.get(slug="demo")
        before = list(demo.toolsets)
        if "payments" not in before:
            demo.toolsets = [*before, "payments"]
            demo.save()
    yield
    with django_db_blocker.unblock():
        demo = Tenant.objects.get(slug="demo")
        demo.toolsets = before
        demo.save()


@pytest.fixture(scope="package")
def server(server_factory: Callable[..., LiveServer], payments_enabled: None) -> Iterator[LiveServer]:
    """The approvals tests' own server (started after `payments` was enabled, with short waits)."""
    server = server_factory(
        MCPSITE_APPROVALS_HOLD_SECONDS=HOLD_SECONDS, MCPSITE_APPROVALS_LEGACY_WAIT_SECONDS=LEGACY_WAIT_SECONDS
    )
    yield server
    server.stop()


@pytest.fixture
def booking(django_db_blocker: Any) -> int:
    with django_db_blocker.unblock():
        demo = Tenant.objects.get(slug="demo")
        return Booking.objects.create(tenant=demo, date=datetime.date(2026, 3, 14), party_size=4).pk


@dataclass
class CallInThread:
    """One `mcp.Client` call running in its own thread and event loop.

    Every URL the server asks the user to open lands in `asked` (and the callback accepts, as
    a user who opened it would); `notifications/elicitation/complete` ids land in `completed`.
    """

    url: str
    token: str | None
    mode: str
    tool: str
    arguments: dict[str, Any]
    answer: str = "accept"
    form_answer: dict[str, Any] | None = None  # content for a form question, if the tool asks one
    forms: list[str] = field(default_factory=list)
    asked: queue.Queue[ElicitRequestURLParams] = field(default_factory=queue.Queue)
    completed: list[str] = field(default_factory=list)
    result: Any = None
    error: BaseException | None = None
    linger: float = 0.0
    # 2025-11-25: when the call answers -32042, wait for notifications/elicitation/complete and call again.
    retry_after_complete: bool = False
    first_error: BaseException | None = None
    retries_sent: int = 0
    """Requests the client has sent carrying a requestState (2026-07-28 retries): a test can wait
    for the retry to be on its way instead of sleeping and hoping."""
    _thread: threading.Thread | None = None

    def start(self) -> CallInThread:
        self._thread = threading.Thread(target=lambda: anyio.run(self._run), daemon=True)
        self._thread.start()
        return self

    async def _run(self) -> None:
        completed = anyio.Event()

        async def on_elicit(context: Any, params: ElicitRequestParams) -> ElicitResult:
            if not isinstance(params, ElicitRequestURLParams):
                if self.form_answer is None:
                    raise AssertionError(f"expected only URL-mode questions, got a form: {params.message}")
                self.forms.append(params.message)
                return ElicitResult(action="accept", content=self.form_answer)
            self.asked.put(params)
            return ElicitResult(action=self.answer)  # type: ignore[arg-type]

        async def on_message(message: Any) -> None:
            if isinstance(message, ElicitCompleteNotification):
                self.completed.append(message.params.elicitation_id)
                completed.set()

        async def on_request(request: httpx2.Request) -> None:
            if b'"requestState"' in request.content:
                self.retries_sent += 1

        headers = {"Authorization": f"Bearer {self.token}"} if self.token else {}
        http = httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30.0), event_hooks={"request": [on_request]})
        try:
            async with (
                http,
                Client(
                    streamable_http_client(self.url, http_client=http),
                    mode=self.mode,
                    elicitation_callback=on_elicit,
                    message_handler=on_message,
                ) as client,
            ):
                try:
                    try:
                        self.result = await client.call_tool(self.tool, self.arguments)
                    except MCPError as exc:
                        if not (self.retry_after_complete and exc.code == URL_ELICITATION_REQUIRED):
                            raise
                        self.first_error = exc
                        with anyio.fail_after(20):
                            await completed.wait()
                        self.result = await client.call_tool(self.tool, self.arguments)
                finally:
                    await anyio.sleep(self.linger)  # keep the session open for late notifications
        except BaseException as exc:  # the test asserts on it
            self.error = exc

    def next_question(self, timeout: float = 15.0) -> ElicitRequestURLParams:
        try:
            return self.asked.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"no URL was asked within {timeout}s (error: {self.error!r})") from None

    def join(self, timeout: float = 30.0) -> CallInThread:
        assert self._thread is not None
        self._thread.join(timeout)
        assert not self._thread.is_alive(), f"the call did not finish within {timeout}s"
        return self

    @property
    def mcp_error(self) -> MCPError | None:
        """The protocol error the call ended with (unwrapped from the client's task groups)."""
        error: BaseException | None = self.error
        while isinstance(error, BaseExceptionGroup) and error.exceptions:
            error = error.exceptions[0]
        return error if isinstance(error, MCPError) else None

    @property
    def text(self) -> str:
        if self.error is not None:
            raise AssertionError(f"the call failed: {self.error!r}")
        return str(self.result.content[0].text)


def admin_path(row: Elicitation, view: str = "change") -> str:
    """The admin page of `row`, its id quoted as the admin quotes it (ids hold `_`)."""
    return f"/admin/approvals/elicitation/{quote(row.pk)}/{view}/"


def issuer_of(server: LiveServer) -> str:
    """The OAuth issuer `server` names in its principals (`MCPSITE_ISSUER`, else its site root)."""
    return server.env.get("MCPSITE_ISSUER", server.env["MCPSITE_SITE_ROOT"].rstrip("/"))


def opened_for(
    server: LiveServer, user: Any, kind: str, *, slug: str = "demo", issuer: str | None = None
) -> Elicitation:
    """A pending step opened the way a resolver opens it, for `user`'s token at `server` (None: a
    public tenant's call, which names no principal)."""
    principal = (
        Principal(f"client-{uuid.uuid4().hex[:8]}", issuer or issuer_of(server), str(user.pk))
        if user is not None
        else ANONYMOUS
    )
    return elicitation_open(
        tenant_id=Tenant.objects.get(slug=slug).pk,
        principal=principal,
        tool="share_calendar" if kind == Elicitation.Kind.CONSENT else "request_refund",
        args_digest=uuid.uuid4().hex,
        kind=kind,
        reference=f"{kind}-test",
        message="Your consent is needed: share your calendar with the assistant",
    )


def open_payment(*, tenant_id: int, reference: str = "deposit-test") -> Elicitation:
    """A pending 20 EUR payment, opened the way a resolver opens it, for a user of its own (a
    user pays a reference once, so each test's payment is a new row, and the per-principal cap
    counts each caller alone)."""
    return elicitation_open(
        tenant_id=tenant_id,
        principal=Principal(f"client-{uuid.uuid4().hex[:8]}", "issuer", f"user-{uuid.uuid4().hex[:8]}"),
        tool="pay_deposit",
        args_digest=uuid.uuid4().hex,
        kind=Elicitation.Kind.PAYMENT,
        reference=reference,
        message="Please pay",
        payment=PaymentTerms(amount=Decimal("20.00"), currency="EUR"),
    )


def sign_in_page(page: Any, server: LiveServer, username: str, password: str) -> None:
    """Sign a Playwright page in on the site's login form (the status and consent pages need it)."""
    page.goto(f"{server.url}/accounts/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", password)
    page.click("button[type=submit]")
    page.wait_for_load_state()


def elicitation_id_of(url: str) -> str:
    """The row id from a checkout / status page URL (…/<id>/)."""
    return url.rstrip("/").rsplit("/", 1)[-1]


def payment_event(row: Elicitation, **overrides: Any) -> dict[str, Any]:
    payment = row.payment
    event = checkout_completed_event(
        elicitation_id=row.pk,
        provider_reference=f"cs_test_{row.pk[-6:]}",
        amount=payment.amount,
        currency=payment.currency,
    )
    event.update(overrides)
    return event


def deliver(
    server: LiveServer,
    event: dict[str, Any] | None = None,
    *,
    body: bytes | None = None,
    headers: dict[str, str] | None = None,
    timestamp: int | None = None,
) -> httpx2.Response:
    """POST a webhook to the sandbox receiver, signed unless `headers` says otherwise."""
    if body is None:
        assert event is not None
        body, signed = signed_delivery(event, timestamp=timestamp)
        headers = {**signed, **(headers or {})}
    return httpx2.post(
        f"{server.url}/approvals/webhooks/sandbox/",
        content=body,
        headers={"Content-Type": "application/json", **(headers or {})},
        timeout=15,
    )


def wait_until(predicate: Callable[[], bool], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    raise AssertionError("condition not met in time")
