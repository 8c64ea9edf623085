"""How a tenant's MCPServer is put together from its row."""

from __future__ import annotations

import pytest
from django.test import override_settings

from mcpsite.conf import mcpsite_settings
from mcpsite.keyring import RefuseReplayedState, remember_wire_state
from mcpsite.sdk import OpenTelemetryMiddleware
from mcpsite.serving.registry import build_server
from mcpsite.tenancy import TenantInfo

INFO = TenantInfo(id=1, slug="acme", name="Acme", public=False, toolsets=("demo",), version="v1")


def test_server_is_named_for_its_audience_and_guards_its_state() -> None:
    server, _ = build_server(INFO)
    assert server.name == "mcpsite:acme"
    assert server.middleware[0] is remember_wire_state
    assert any(isinstance(m, RefuseReplayedState) for m in server.middleware)


@pytest.mark.parametrize("spans", [False, True])
def test_opentelemetry_spans_only_when_asked_for(spans: bool) -> None:
    with override_settings(MCPSITE={**mcpsite_settings(), "OTEL_SPANS": spans}):
        server, _ = build_server(INFO)
    assert any(isinstance(m, OpenTelemetryMiddleware) for m in server.middleware) is spans
