"""Staff rotate the key ring through the admin's own pages while clients run multi-round flows
across two processes: not one round fails, and state sealed under the retired key is refused."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import anyio
import httpx2

from mcpsite.models import RequestStateKey
from tests.conftest import Cast, LiveServer
from tests.http import admin_messages, csrf, signed_in
from tests.mcp.clients import text
from tests.mcp.test_request_state import INVALID, first_round, rejected, retry

FAST = {"MCPSITE_REQUEST_STATE_TTL": "4", "MCPSITE_POLL_SECONDS": "0.5"}


class Load:
    """Two-round provision calls, asked on one process and answered on the other, until stopped."""

    def __init__(self, a: LiveServer, b: LiveServer, token: str) -> None:
        self.pairs = [(a, b), (b, a)]
        self.token = token
        self.completed = 0
        self.failures: list[str] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> Load:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=30)

    def _run(self) -> None:
        while not self._stop.is_set():
            for asker, answerer in self.pairs:
                try:
                    state = anyio.run(first_round, asker.mcp_url(), self.token)
                    result = anyio.run(retry, answerer.mcp_url(), self.token, state)
                    assert text(result) == "Provisioned 'orders' in eu-west-1.", text(result)
                    self.completed += 1
                except BaseException as exc:  # every kind of failure counts
                    self.failures.append(repr(exc))


def admin_action(http: httpx2.Client, action: str, key: RequestStateKey) -> str:
    page = http.get("/admin/mcpsite/requeststatekey/")
    response = http.post(
        "/admin/mcpsite/requeststatekey/",
        data={"csrfmiddlewaretoken": csrf(page), "action": action, "_selected_action": str(key.pk), "index": "0"},
        follow_redirects=True,
    )
    return admin_messages(response)


def until(step: Callable[[], str], done: str, timeout: float) -> list[str]:
    """Repeat an admin step until its message says `done`; return the refusals seen on the way."""
    refusals, deadline = [], time.monotonic() + timeout
    while done not in (message := step()):
        refusals.append(message)
        assert time.monotonic() < deadline, f"never got {done!r}; last message: {message!r}"
        time.sleep(0.25)
    return refusals


def test_rotation_through_the_admin_fails_no_round(server_factory: Callable[..., LiveServer], cast: Cast) -> None:
    a = server_factory(**FAST)
    b = server_factory(MCPSITE_SITE_ROOT=a.url, **FAST)
    try:
        token = cast.token(a)
        old = RequestStateKey.objects.get(phase=RequestStateKey.Phase.MINTING)
        sealed_under_old = anyio.run(first_round, a.mcp_url(), token)
        staff = signed_in(a, "staff", "staff-password-1")

        with Load(a, b, token) as load:
            time.sleep(1.0)
            add = staff.get("/admin/mcpsite/requeststatekey/add/")
            staff.post("/admin/mcpsite/requeststatekey/add/", data={"csrfmiddlewaretoken": csrf(add), "generate": "1"})
            new = RequestStateKey.objects.filter(phase=RequestStateKey.Phase.VERIFYING).latest("created_at")
            until(lambda: admin_action(staff, "promote", new), "now mints new requestState", timeout=15)
            time.sleep(1.0)
            early = until(lambda: admin_action(staff, "retire", old), f"Key {old.kid} retired.", timeout=20)
            time.sleep(1.0)

        assert load.failures == []
        assert load.completed >= 10
        assert early and "may still be in flight" in early[0]  # the guard held retirement back at first
        old.refresh_from_db()
        assert old.phase == RequestStateKey.Phase.RETIRED
        assert rejected(lambda: retry(b.mcp_url(), token, sealed_under_old)) == INVALID
    finally:
        a.stop()
        b.stop()
