"""The shared cast and the live servers.

Session data (tenants, users, the key ring) is committed once into the test database, so real
uvicorn processes see it. Live tests are plain sync tests that drive real clients with
`anyio.run`; the ORM stays on the test's own thread.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx2
import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractUser
from django.db import connection, connections

from demo.models import File, Folder
from mcpsite import services
from mcpsite.keyring import rotation
from mcpsite.models import Tenant
from tests.mcp.clients import modern_post

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="session")
def django_db_setup(django_test_environment: None, django_db_blocker: Any) -> Iterator[None]:
    """Create the test database and commit the cast into it (pytest-django only creates it for
    tests marked ``django_db``, and those run inside a transaction no server could see)."""
    from django.test.utils import setup_databases, teardown_databases

    with django_db_blocker.unblock():
        databases = setup_databases(verbosity=0, interactive=False, aliases={"default": {}})
        User = get_user_model()
        alice = User.objects.create_user("alice", password="alice-password-1")
        bob = User.objects.create_user("bob", password="bob-password-1")
        mallory = User.objects.create_user("mallory", password="mallory-password-1")
        User.objects.create_superuser("staff", password="staff-password-1")
        demo = Tenant.objects.create(slug="demo", name="Demo", toolsets=["demo"])
        demo.members.add(alice, bob)
        other = Tenant.objects.create(slug="other", name="Other", toolsets=["demo"])
        other.members.add(mallory)
        Tenant.objects.create(slug="open", name="Open fixtures", toolsets=["demo"], public=True)
        rotation.keyring_ensure_minting()
    yield
    with django_db_blocker.unblock():
        with connection.cursor() as cursor:  # a server killed mid-test may leave its sessions behind
            cursor.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                " WHERE datname = current_database() AND pid <> pg_backend_pid()"
            )
        connections.close_all()
        teardown_databases(databases, verbosity=0)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def database_url() -> str:
    """The test database (pytest-django's ``test_`` copy) as a URL a server process can use."""
    s = connection.settings_dict
    return f"postgres://{s['USER']}@{s['HOST']}:{s['PORT']}/{s['NAME']}"


@dataclass
class LiveServer:
    """A real server process (``python -m mcp_server.serve``: uvicorn, as deployed) on loopback."""

    port: int
    env: dict[str, str]
    log_path: Path
    process: subprocess.Popen[bytes] | None = None
    _log_offset: int = field(default=0)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def mcp_url(self, slug: str = "demo") -> str:
        return f"{self.url}/t/{slug}/mcp"

    def start(self) -> LiveServer:
        log = self.log_path.open("ab")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "mcp_server.serve", "--port", str(self.port)],  # as scripts/run serves it
            cwd=ROOT,
            env=self.env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"server exited early:\n{self.log()}")
            try:
                if httpx2.get(f"{self.url}/healthz", timeout=1).status_code == 200:
                    return self
            except httpx2.TransportError:
                pass
            time.sleep(0.1)
        raise RuntimeError(f"server did not start:\n{self.log()}")

    def stop(self, *, kill: bool = False) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill() if kill else self.process.terminate()
            self.process.wait(timeout=15)
        self.process = None

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def mark_log(self) -> None:
        """Later `wait_for_log` calls only look at lines written after this point."""
        self._log_offset = self.log_path.stat().st_size

    def log_since_mark(self) -> str:
        return self.log_path.read_bytes()[self._log_offset :].decode(errors="replace")

    def wait_for_log(self, text: str, timeout: float = 10.0) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            tail = self.log_path.read_bytes()[self._log_offset :].decode(errors="replace")
            if text in tail:
                return tail
            time.sleep(0.05)
        raise AssertionError(f"{text!r} not logged within {timeout}s; log since mark:\n{tail}")


@pytest.fixture(scope="session")
def server_factory(
    django_db_setup: None, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Callable[..., LiveServer]]:
    started: list[LiveServer] = []

    def make(port: int | None = None, **env: str) -> LiveServer:
        port = port or free_port()
        full_env = {
            **os.environ,
            "PORT": str(port),
            "MCPSITE_SITE_ROOT": f"http://127.0.0.1:{port}",
            "MCPSITE_DATABASE_URL": database_url(),
            "MCPSITE_TASKS_IN_PROCESS": "1",  # no Celery worker runs beside the suite's servers
            **env,
        }
        server = LiveServer(port=port, env=full_env, log_path=tmp_path_factory.mktemp("server") / "server.log")
        started.append(server)
        return server.start()

    yield make
    for server in started:
        server.stop()


@pytest.fixture(scope="session")
def live(server_factory: Callable[..., LiveServer]) -> LiveServer:
    """The suite's shared server."""
    return server_factory()


@pytest.fixture
def conformance_url(live: LiveServer, cast: Cast) -> str:
    """The public `conformance` tenant, once the live server serves its toolset."""
    wanted = {"name": "Conformance fixtures", "toolsets": ["conformance"], "public": True, "enabled": True}
    tenant, created = Tenant.objects.get_or_create(slug="conformance", defaults=wanted)
    if not created and any(getattr(tenant, field) != value for field, value in wanted.items() if field != "name"):
        for field, value in wanted.items():
            setattr(tenant, field, value)
        tenant.save()
    url = live.mcp_url("conformance")
    deadline = time.monotonic() + 10  # the registry hears of the change within a second, or on its 5 s poll
    while "test_simple_text" not in (response := modern_post(url, "tools/list")).text:
        assert time.monotonic() < deadline, f"{url} still answers {response.status_code}: {response.text[:300]}"
        time.sleep(0.1)
    return url


@pytest.fixture
def cast(django_db_blocker: Any) -> Iterator[Cast]:
    with django_db_blocker.unblock():
        yield Cast()


class Cast:
    """alice and bob share tenant `demo`; mallory is at tenant `other`. Writes here are committed."""

    def user(self, name: str) -> AbstractUser:
        return get_user_model().objects.get(username=name)

    def tenant(self, slug: str) -> Tenant:
        return Tenant.objects.get(slug=slug)

    def token(self, server: LiveServer, name: str = "alice", slug: str = "demo", **kwargs: Any) -> str:
        tenant = self.tenant(slug)
        return services.token_issue(tenant=tenant, user=self.user(name), site_root=server.url, **kwargs).token

    def folder(self, files: list[str], slug: str = "demo") -> str:
        path = f"/tmp/{uuid.uuid4().hex[:8]}"
        folder = Folder.objects.create(tenant=self.tenant(slug), path=path)
        File.objects.bulk_create(File(folder=folder, name=name) for name in files)
        return path

    def folder_exists(self, path: str, slug: str = "demo") -> bool:
        return Folder.objects.filter(tenant__slug=slug, path=path).exists()


CHROMIUM = os.environ.get("MCPSITE_CHROMIUM", "/usr/bin/chromium")
# Without these, Chromium keeps trying to reach Google's services, which this machine cannot.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture
def browser(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """Debian's headless Chromium, driven by Playwright (never a browser Playwright downloads)."""
    from playwright.sync_api import sync_playwright

    # Playwright's sync API keeps an event loop registered on this thread between calls, which
    # Django's async-safety check mistakes for async code; the test's ORM calls are plain sync.
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def page(browser: Any, request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A fresh browser context; a screenshot of the last page lands in the test output folder."""
    context = browser.new_context()
    page = context.new_page()
    yield page
    shots = ROOT / "test-output" / "screenshots"
    shots.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(shots / f"{request.node.name}.png"), full_page=True)
    context.close()


def sign_in_to_admin(page: Any, server: LiveServer, next_path: str) -> None:
    """Sign a Playwright page in as the `staff` superuser on the admin's login form, landing on `next_path`."""
    page.goto(f"{server.url}/admin/login/?next={next_path}")
    page.fill("#id_username", "staff")
    page.fill("#id_password", "staff-password-1")
    page.click("input[type=submit]")
    page.wait_for_url(f"**{next_path}")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # uvicorn's loop, which the servers under test run on
