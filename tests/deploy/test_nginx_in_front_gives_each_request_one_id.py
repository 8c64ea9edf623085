"""deploy/nginx.conf, run by Debian's nginx in front of a live server writing JSON logs, as compose
runs it (the only changes: its upstreams are the server's address, it listens on a free port, its
access log goes to a file). A request's id is nginx's ``$request_id`` whatever the client sent: the
client gets it back, the server logs under it, and nginx's access log line carries it."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx2
import pytest

from mcpsite import services
from tests.conftest import Cast, LiveServer, free_port
from tests.deploy.conftest import DEPLOY
from tests.http import modern_tool_call

NGINX = shutil.which("nginx") or "/usr/sbin/nginx"


def localised(directory: Path, *, port: int, upstream: int) -> Path:
    text = (DEPLOY / "nginx.conf").read_text()
    for host in ("web1", "web2"):
        assert f"server {host}:8000;" in text
        text = text.replace(f"server {host}:8000;", f"server 127.0.0.1:{upstream};")
    assert "listen 8080;" in text and "access_log /dev/stdout json;" in text
    text = text.replace("listen 8080;", f"listen 127.0.0.1:{port};")
    text = text.replace("access_log /dev/stdout json;", f"access_log {directory}/access.log json;")
    path = directory / "nginx.conf"
    path.write_text(text)
    return path


def nginx_command(config: Path, *test: str) -> list[str]:
    directory = config.parent
    main = f"pid {directory}/nginx.pid; error_log {directory}/error.log;"
    if os.geteuid() == 0:
        main += " user root;"  # its workers write the access log into this test's folder
    for name in ("body", "proxy"):
        (directory / name).mkdir(exist_ok=True)
    return [NGINX, *test, "-c", str(config), "-p", str(directory), "-g", f"daemon off; {main}"]


def test_the_deploy_nginx_config_passes_nginx_t(tmp_path: Path) -> None:
    done = subprocess.run(
        nginx_command(localised(tmp_path, port=free_port(), upstream=free_port()), "-t"),
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 0, done.stderr
    assert "test is successful" in done.stderr


@dataclass
class Proxied:
    url: str
    server: LiveServer
    access_log: Path


@pytest.fixture
def proxied(server_factory: Callable[..., LiveServer], tmp_path: Path) -> Iterator[Proxied]:
    port = free_port()
    server = server_factory(
        MCPSITE_LOG_FORMAT="json", MCPSITE_TRUSTED_PROXIES="127.0.0.1", MCPSITE_SITE_ROOT=f"http://127.0.0.1:{port}"
    )
    config = localised(tmp_path, port=port, upstream=server.port)
    nginx = subprocess.Popen(nginx_command(config), stderr=(tmp_path / "stderr.log").open("wb"))
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 10
    while True:
        try:
            if httpx2.get(f"{url}/healthz", timeout=1).status_code == 200:
                break
        except httpx2.TransportError:
            pass
        assert nginx.poll() is None and time.monotonic() < deadline, (tmp_path / "stderr.log").read_text()
        time.sleep(0.05)
    yield Proxied(url=url, server=server, access_log=tmp_path / "access.log")
    nginx.terminate()
    nginx.wait(timeout=10)
    server.stop()


def test_a_request_through_nginx_is_logged_and_answered_under_nginxs_id(proxied: Proxied, cast: Cast) -> None:
    # Bound to the public URL, the proxy's (RFC 8707), as the server's site root says.
    token = services.token_issue(tenant=cast.tenant("demo"), user=cast.user("alice"), site_root=proxied.url).token
    call, headers = modern_tool_call(
        "book_table", {"date": "not-a-date", "party_size": 2}, token=token, request_id="chosen-by-the-client-0001"
    )
    proxied.server.mark_log()
    answer = httpx2.post(f"{proxied.url}/t/demo/mcp", json=call, headers=headers, timeout=10)
    assert answer.status_code == 200, answer.text
    request_id = answer.headers["x-request-id"]
    assert re.fullmatch(r"[0-9a-f]{32}", request_id), answer.headers  # nginx's, not the client's

    logged = proxied.server.wait_for_log("rejected arguments")
    [line] = [x for x in map(json.loads, logged.splitlines()) if "rejected arguments" in x["message"]]
    assert (line["request_id"], line["tenant"], line["tool"]) == (request_id, "demo", "book_table")

    deadline = time.monotonic() + 5
    while not proxied.access_log.exists() or request_id not in proxied.access_log.read_text():
        assert time.monotonic() < deadline, "nginx's access log has no line for the request"
        time.sleep(0.05)
    [access] = [x for x in map(json.loads, proxied.access_log.read_text().splitlines()) if x["uri"] == "/t/demo/mcp"]
    assert (access["request_id"], access["status"], access["method"]) == (request_id, 200, "POST")
