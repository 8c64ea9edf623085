"""With the standard ``OTEL_EXPORTER_OTLP_ENDPOINT`` set, a live server exports the SDK's span of
each MCP message and Django's span of each page request over OTLP/HTTP; with no ``OTEL_*`` set,
nothing of OpenTelemetry's SDK is loaded or installed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator

import anyio
import httpx2
import pytest

from tests.conftest import ROOT, Cast, LiveServer
from tests.mcp.clients import accept, connect, text
from tests.operate.otlp import OtlpReceiver

SERVER_KIND = 2  # opentelemetry.proto.trace.v1.Span.SPAN_KIND_SERVER


@pytest.fixture
def receiver() -> Iterator[OtlpReceiver]:
    receiver = OtlpReceiver().start()
    yield receiver
    receiver.stop()


def test_the_sdks_and_djangos_spans_reach_the_otlp_receiver(
    server_factory: Callable[..., LiveServer], receiver: OtlpReceiver, cast: Cast
) -> None:
    server = server_factory(OTEL_EXPORTER_OTLP_ENDPOINT=receiver.endpoint, OTEL_BSP_SCHEDULE_DELAY="100")
    try:
        token = cast.token(server)

        async def call() -> str:
            async with connect(server.mcp_url(), token, answer=accept(region="eu-west-1")) as client:
                return text(await client.call_tool("provision", {"name": "orders"}))

        assert anyio.run(call) == "Provisioned 'orders' in eu-west-1."
        page = httpx2.get(f"{server.url}/.well-known/oauth-authorization-server", timeout=10)
        assert page.status_code == 200

        tool = receiver.wait_for(lambda s: s.name == "tools/call provision")
        assert tool.scope == "mcp-python-sdk"
        assert tool.kind == SERVER_KIND
        assert tool.attributes["gen_ai.tool.name"] == "provision"
        assert tool.attributes["mcp.protocol.version"] == "2026-07-28"
        assert tool.service == "mcpsite"
        django = receiver.wait_for(lambda s: s.scope == "opentelemetry.instrumentation.django")
        assert django.kind == SERVER_KIND
        assert django.name.startswith("GET")
        assert set(receiver.paths) == {"/v1/traces"}
        # the probes and /metrics are left out by default
        assert httpx2.get(f"{server.url}/healthz", timeout=10).status_code == 200
        server.stop()  # flushed at exit
        assert not any("healthz" in s.name for s in receiver.spans)
    finally:
        server.stop()


PROBE = """
import json, sys
from mcp_server.asgi import django_application
from django.conf import settings
from mcp_server.registry import build_server
from tools_app.sdk import OpenTelemetryMiddleware
from tools_app.tenant import TenantInfo
from opentelemetry import trace
server, _ = build_server(TenantInfo(id=1, slug="acme", name="Acme", public=True, toolsets=("demo",), version="v1"))
print(json.dumps({
    "provider": type(trace.get_tracer_provider()).__name__,
    "sdk_loaded": "opentelemetry.sdk.trace" in sys.modules,
    "django_instrumented": any("opentelemetry" in m for m in settings.MIDDLEWARE),
    "otel_spans": settings.MCPSITE["OTEL_SPANS"],
    "sdk_middleware": any(isinstance(m, OpenTelemetryMiddleware) for m in server.middleware),
}))
"""


def test_without_otel_variables_nothing_is_installed(cast: Cast) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_") and k != "MCPSITE_OTEL_SPANS"}
    found = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=True
    )
    assert json.loads(found.stdout.strip().splitlines()[-1]) == {
        "provider": "ProxyTracerProvider",
        "sdk_loaded": False,
        "django_instrumented": False,
        "otel_spans": False,
        "sdk_middleware": False,
    }
