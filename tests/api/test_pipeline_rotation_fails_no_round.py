"""A deployment pipeline rotates the ring with `scripts/rotate-keyring`, which uses only the
operator API, while clients run two-round calls across two server processes: not one round fails,
the script waited where the guards told it to, and the old key ends retired."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Callable

import anyio

from mcpsite.models import KeyRingEvent, RequestStateKey
from tests.admin.test_rotation_under_load import FAST, Load
from tests.api.conftest import machine_client
from tests.conftest import ROOT, Cast, LiveServer
from tests.mcp.test_request_state import INVALID, first_round, rejected, retry


def test_the_rotation_script_fails_no_round_on_two_processes(
    server_factory: Callable[..., LiveServer], cast: Cast
) -> None:
    a = server_factory(**FAST)
    b = server_factory(MCPSITE_SITE_ROOT=a.url, **FAST)
    try:
        token = cast.token(a)
        operator = machine_client(a, "ops", ["keys:rotate"])
        old = RequestStateKey.objects.get(phase=RequestStateKey.Phase.MINTING)
        sealed_under_old = anyio.run(first_round, a.mcp_url(), token)

        with Load(a, b, token) as load:
            time.sleep(1.0)
            script = subprocess.run(
                [sys.executable, str(ROOT / "scripts" / "rotate-keyring"), a.url, "--timeout", "60"],
                env={"MCPSITE_API_CLIENT_ID": operator.client_id, "MCPSITE_API_CLIENT_SECRET": operator.secret},
                capture_output=True,
                text=True,
                timeout=90,
            )
            time.sleep(1.0)

        assert script.returncode == 0, script.stdout + script.stderr
        assert load.failures == []
        assert load.completed >= 10
        assert f"retire: State sealed with key {old.kid} may still be in flight" in script.stdout  # it waited
        assert script.stdout.rstrip().endswith(f"retired {old.kid}")
        old.refresh_from_db()
        assert old.phase == RequestStateKey.Phase.RETIRED
        new = RequestStateKey.objects.get(phase=RequestStateKey.Phase.MINTING)
        audit = KeyRingEvent.objects.filter(oauth_client=operator.client_id).order_by("at")
        assert [(e.action, e.kid, e.actor and e.actor.username) for e in audit] == [
            ("added", new.kid, "ops"),
            ("promoted", new.kid, "ops"),
            ("retired", old.kid, "ops"),
        ]
        assert rejected(lambda: retry(b.mcp_url(), token, sealed_under_old)) == INVALID
    finally:
        a.stop()
        b.stop()
