"""The official conformance suite's ``authorization`` command passes against our authorization
server: its metadata scenario, and the authorization-code grant (PKCE, a client we registered,
alice signing in and consenting in a real browser, the code exchanged for a token for a tenant).

The suite prints the authorization URL and waits for a person to finish there; its own callback
server on 127.0.0.1 receives the redirect. Here Chromium (Playwright) is that person.
"""

from __future__ import annotations

import json
import queue
import re
import subprocess
import threading
from pathlib import Path
from typing import IO, Any
from urllib.parse import parse_qs, urlsplit

import httpx2

from tests.conformance.test_conformance_suite import NOT_PASSING, RUNNER
from tests.conftest import Cast, LiveServer, free_port

# --output-dir holds one `authorization-server-<scenario>-<timestamp>/checks.json` per scenario.
_RESULT_DIR = re.compile(r"^authorization-server-(?P<scenario>.+)-\d{4}-\d{2}-\d{2}T[\d-]+Z$")
SCENARIOS = {"authorization-server-metadata-endpoint", "authorization-code-grant"}


def lines_of(stream: IO[str]) -> queue.Queue[str]:
    """The stream's lines as they come (a thread reads it, so a silent suite cannot block the test)."""
    lines: queue.Queue[str] = queue.Queue()

    def read() -> None:
        for line in stream:
            lines.put(line)
        lines.put("")  # the end

    threading.Thread(target=read, daemon=True).start()
    return lines


def wait_for_authorization_url(lines: queue.Queue[str], prefix: str, seen: list[str]) -> str:
    while True:
        line = lines.get(timeout=60)
        assert line, "the suite ended before printing an authorization URL:\n" + "".join(seen)
        seen.append(line)
        if line.startswith(prefix):
            return line.strip()


def sign_in_and_allow(browser: Any, url: str, callback: str) -> None:
    page = browser.new_page()
    try:
        page.goto(url)
        page.fill("#id_username", "alice")
        page.fill("#id_password", "alice-password-1")
        page.click("button[type=submit]")
        page.wait_for_load_state()
        page.click("button[name=allow]")
        page.wait_for_url(f"{callback}**")  # the suite's callback server answered the redirect
    finally:
        page.close()


def test_the_authorization_server_passes_the_conformance_suite(
    live: LiveServer, cast: Cast, browser: Any, tmp_path: Path
) -> None:
    port = free_port()
    callback = f"http://127.0.0.1:{port}/callback"
    registered = httpx2.post(
        f"{live.url}/o/register/",
        json={
            "client_name": "conformance suite",
            "application_type": "native",
            "redirect_uris": [callback],
            "grant_types": ["authorization_code", "refresh_token"],
            "token_endpoint_auth_method": "none",
        },
        timeout=10,
    )
    assert registered.status_code == 201, registered.text
    suite = subprocess.Popen(
        [
            str(RUNNER),
            "authorization",
            "--url",
            live.url,
            "--client-id",
            registered.json()["client_id"],
            "--resource",
            live.mcp_url(),
            "--port",
            str(port),
            "-o",
            str(tmp_path),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    seen: list[str] = []
    try:
        lines = lines_of(suite.stdout)  # type: ignore[arg-type]
        sign_in_and_allow(browser, wait_for_authorization_url(lines, f"{live.url}/o/authorize/?", seen), callback)
        exit_code = suite.wait(timeout=60)
    finally:
        if suite.poll() is None:
            suite.kill()
            suite.wait()
    while (line := lines.get(timeout=10)) != "":
        seen.append(line)
    output = "".join(seen)

    checks: dict[str, list[dict[str, Any]]] = {}
    for path in tmp_path.glob("*/checks.json"):
        match = _RESULT_DIR.match(path.parent.name)
        assert match, f"unexpected result directory {path.parent.name}"
        checks[match["scenario"]] = json.loads(path.read_text())
    assert checks.keys() == SCENARIOS, output
    not_passing = [
        f"{name}: [{c['status']}] {c['id']}: {c.get('errorMessage', '')}"
        for name, scenario in checks.items()
        for c in scenario
        if c["status"] in NOT_PASSING or c["status"] == "SKIPPED"
    ]
    assert not not_passing, "\n".join(not_passing) + "\n--- suite output ---\n" + output
    assert exit_code == 0, output
    # The suite checks an `iss` only when there is one: ours is there (RFC 9207), the metadata's issuer.
    response = checks["authorization-code-grant"][0]["details"]["authorizationResponseUrl"]
    assert parse_qs(urlsplit(response).query)["iss"] == [live.url]
