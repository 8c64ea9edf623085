"""Scale-out as deployed: two uvicorn processes behind nginx (Debian's). 2026-07-28 requests go
anywhere; a 2025-11-25 session must stay on the process holding it; SSE is not buffered."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import anyio
import httpx2
import pytest

from mcpsite import services
from tests.conftest import Cast, LiveServer, free_port
from tests.mcp.clients import MODES, accept, connect, text

NGINX = shutil.which("nginx") or "/usr/sbin/nginx"

CONFIG = """
worker_processes 1;
daemon off;
pid {dir}/nginx.pid;
error_log {dir}/error.log warn;
{user}
events {{ worker_connections 256; }}
http {{
  log_format upstream '$request_method $uri $upstream_addr $status';
  access_log {dir}/access.log upstream;
  client_body_temp_path {dir}/body;
  proxy_temp_path {dir}/proxy;
  # 2026-07-28 requests are self-contained: spread them. Everything else (a 2025-11-25 session,
  # from its initialize on) sticks to one process per client address.
  map $http_mcp_protocol_version $mcp_route {{
    "2026-07-28" $request_id;
    default $remote_addr;
  }}
  upstream mcpsite {{
    hash $mcp_route consistent;
    server 127.0.0.1:{a};
    server 127.0.0.1:{b};
  }}
  server {{
    listen 127.0.0.1:{port};
    location / {{
      proxy_pass http://mcpsite;
      proxy_http_version 1.1;
      proxy_set_header Host $http_host;
      # Overwrite, never pass on or append to, what the client sent: the upstreams believe these
      # headers from this proxy (MCPSITE_TRUSTED_PROXIES) and count limits by that address.
      proxy_set_header X-Forwarded-For $remote_addr;
      proxy_set_header X-Forwarded-Proto $scheme;
      proxy_set_header Connection "";
      proxy_buffering off;  # SSE responses and keep-alives must not wait in the proxy
      proxy_read_timeout 120s;
    }}
  }}
}}
"""


class Proxy:
    def __init__(self, directory: Path, port: int, a: LiveServer, b: LiveServer) -> None:
        self.dir, self.port = directory, port
        user = "user root;" if os.geteuid() == 0 else ""
        (directory / "nginx.conf").write_text(CONFIG.format(dir=directory, user=user, a=a.port, b=b.port, port=port))
        self.process = subprocess.Popen([NGINX, "-c", str(directory / "nginx.conf"), "-p", str(directory)])
        deadline = time.monotonic() + 10
        while True:
            try:
                if httpx2.get(f"{self.url}/healthz", timeout=1).status_code == 200:
                    return
            except httpx2.TransportError:
                pass
            assert time.monotonic() < deadline, (directory / "error.log").read_text()
            time.sleep(0.05)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def upstreams(self, method: str = "POST") -> list[str]:
        lines = (self.dir / "access.log").read_text().splitlines()
        return [line.split()[2] for line in lines if line.startswith(f"{method} /t/demo/mcp")]

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=10)


@pytest.fixture
def proxied(
    server_factory: Callable[..., LiveServer], tmp_path: Path
) -> Iterator[tuple[Proxy, LiveServer, LiveServer]]:
    port = free_port()
    root = f"http://127.0.0.1:{port}"  # the public URL is the proxy's
    env = {"MCPSITE_SITE_ROOT": root, "MCPSITE_TRUSTED_PROXIES": "127.0.0.1"}  # nginx, as deployed
    a, b = server_factory(**env), server_factory(**env)
    proxy = Proxy(tmp_path, port, a, b)
    yield proxy, a, b
    proxy.stop()
    a.stop()
    b.stop()


@pytest.mark.parametrize("mode", MODES)
def test_calls_through_the_proxy_complete_in_both_generations(
    proxied: tuple[Proxy, LiveServer, LiveServer], cast: Cast, mode: str
) -> None:
    proxy, a, b = proxied
    token = services.token_issue(tenant=cast.tenant("demo"), user=cast.user("alice"), site_root=proxy.url).token

    async def scenario() -> list[str]:
        replies = []
        for _ in range(6):
            async with connect(f"{proxy.url}/t/demo/mcp", token, mode=mode, answer=accept(region="eu-west-1")) as c:
                replies.append(text(await c.call_tool("provision", {"name": "orders"})))
        return replies

    assert anyio.run(scenario) == ["Provisioned 'orders' in eu-west-1."] * 6
    upstreams = set(proxy.upstreams())
    if mode == "legacy":  # every session (one client address) stayed on one process
        assert len(upstreams) == 1, upstreams
    else:  # the rounds of one call landed on both processes
        assert upstreams == {f"127.0.0.1:{a.port}", f"127.0.0.1:{b.port}"}, upstreams
