"""How a tenant's MCPServer is put together from its row."""

from __future__ import annotations

import pytest
from django.conf import settings
from django.test import override_settings

from audit.layer import AuditToolCalls
from mcp_server.compiled_calls import CompiledToolCalls
from mcp_server.compose import build_server
from mcpsite.conf import mcpsite_settings
from mcpsite.keyring import RefuseReplayedState, remember_wire_state
from mcpsite.logs import LogContextLayer, log_context_layer
from mcpsite.toolcall_metrics import CountToolCalls
from tools_app.rounds import RoundMiddleware
from tools_app.sdk import OpenTelemetryMiddleware, sdk_tool
from tools_app.tenant import TenantInfo

INFO = TenantInfo(id=1, slug="acme", name="Acme", public=False, toolsets=("demo",), version="v1")


def test_server_is_named_for_its_audience_and_guards_its_state() -> None:
    server, _ = build_server(INFO)
    assert server.name == "mcpsite:acme"
    # First the call's log context, so every line of the call says which call it was, set by the
    # audit layer, which records each tool call with the log context's request id; then the calls
    # counted (outermost of the rest: it times every request), then the wire state, ahead of the
    # SDK's built-ins.
    assert isinstance(server.middleware[0], AuditToolCalls)
    assert isinstance(server.middleware[0], LogContextLayer)
    assert isinstance(server.middleware[1], CountToolCalls)
    assert server.middleware[2] is remember_wire_state
    assert any(isinstance(m, RefuseReplayedState) for m in server.middleware)


def test_without_the_audit_the_log_context_layer_stands_first_alone() -> None:
    with override_settings(AUDIT={**settings.AUDIT, "ENABLED": False}):
        server, _ = build_server(INFO)
    assert server.middleware[0] is log_context_layer
    assert not any(isinstance(m, AuditToolCalls) for m in server.middleware)
    assert isinstance(server.middleware[1], CountToolCalls)


@pytest.mark.parametrize("compiled", [False, True])
def test_compiled_tool_calls_only_when_on(compiled: bool) -> None:
    plain_tools = TenantInfo(id=5, slug="plain", name="Plain", public=False, toolsets=("conformance",), version="v1")
    with override_settings(MCPSITE={**mcpsite_settings(), "COMPILED_CALLS": compiled}):
        server, _ = build_server(plain_tools)
    assert (type(server.middleware[-1]).__name__ == "CompiledToolCalls") is compiled


@pytest.mark.parametrize("spans", [False, True])
def test_opentelemetry_spans_only_when_asked_for(spans: bool) -> None:
    with override_settings(MCPSITE={**mcpsite_settings(), "OTEL_SPANS": spans}):
        server, _ = build_server(INFO)
    assert any(isinstance(m, OpenTelemetryMiddleware) for m in server.middleware) is spans


def test_tenants_serving_one_toolset_share_its_tool_records_and_each_keeps_its_own_server() -> None:
    """Building a tool's record (argument model, schemas) was most of a tenant's build and memory:
    it is built once per process, and the URL-mode toolsets' strict argument model stays strict."""
    other = TenantInfo(id=2, slug="beta", name="Beta", public=True, toolsets=("demo", "payments"), version="v1")
    first, _ = build_server(INFO)
    second, _ = build_server(other)

    assert first is not second
    assert sdk_tool(first, "book_table") is sdk_tool(second, "book_table")
    pay = sdk_tool(second, "pay_deposit")
    assert pay is not None
    assert pay.parameters["additionalProperties"] is False
    assert pay.fn_metadata.arg_model.model_config.get("extra") == "forbid"
    assert sdk_tool(first, "pay_deposit") is None  # a toolset the tenant does not serve


def test_every_layer_stands_in_its_one_order() -> None:
    """Ours around the SDK's, outermost first, as `mcp_server.compose.layers` writes them: the
    call's log context and its audit row, the calls counted, the sealed state noted outside the boundary, then a
    private tenant's member roles, our one round layer (question names and URL-mode steps), the
    replay guard, MCP Apps hidden from clients without them, and innermost the compiled tool calls
    (`mcp_server.compiled_calls`), only when they are on."""
    payments = TenantInfo(
        id=3, slug="pay", name="Pay", public=False, toolsets=("demo", "payments", "conformance"), version="v1"
    )
    server, _ = build_server(payments)
    assert [type(m).__name__ for m in server.middleware] == [
        "AuditToolCalls",
        "CountToolCalls",
        "function",
        "RequestStateBoundary",
        "OnlyTheRolesTools",
        "RoundMiddleware",
        "RefuseReplayedState",
        "HideAppsFromPlainClients",
        "CompiledToolCalls",
    ]
    assert server.middleware[2] is remember_wire_state
    public, _ = build_server(TenantInfo(id=4, slug="open", name="Open", public=True, toolsets=("demo",), version="v1"))
    assert "OnlyTheRolesTools" not in [type(m).__name__ for m in public.middleware]  # anonymous callers hold no role
    # Of `demo`'s tools only `provision` takes no Context of its own: it alone is compiled (its
    # questions included); the others go to the SDK's handler.
    compiled = public.middleware[-1]
    assert isinstance(compiled, CompiledToolCalls)
    assert [name for name in ("provision", "delete_folder", "book_table") if name in compiled] == ["provision"]


def test_url_mode_steps_are_carried_only_for_a_url_mode_toolsets_tools() -> None:
    """One round layer on every tenant; it carries URL-mode steps for the tools of a
    `UrlModeToolset` only, and knows nothing of a tool that asks nothing (it passes straight through)."""
    payments = TenantInfo(
        id=3, slug="pay", name="Pay", public=True, toolsets=("demo", "payments", "bench"), version="v1"
    )
    for info in (INFO, payments):
        server, _ = build_server(info)
        (rounds,) = [m for m in server.middleware if isinstance(m, RoundMiddleware)]
        by_tool = {name: asking.url_steps for (method, name), asking in rounds.calls.items() if method == "tools/call"}
        assert by_tool.get("book_table") is False  # the demo toolset's form questions
        assert by_tool.get("pay_deposit") is (True if info is payments else None)
    assert by_tool.get("greet") is False  # the bench toolset's form question
    assert "echo" not in by_tool  # asks nothing


def test_building_a_server_renders_form_questions_once_per_schema() -> None:
    """The composer, not an app's `ready()`, memoises the SDK's form-question rendering."""
    from mcp.server.mcpserver import resolve

    build_server(INFO)
    assert getattr(resolve._render_request, "memoized", False) is True
