"""A tenant's protected resource metadata (RFC 9728) lists ``scopes_supported``: ``mcp`` and every
scope a tool declares, so a client knows what it may ask for. The list is the site's, the same at
every private tenant and at an unknown one (which answers exactly as a private one, metadata
included); the authorization server's metadata lists the same and never an operator scope."""

from __future__ import annotations

import httpx2

from operator_api.scopes import OPERATOR_SCOPES
from tests.conftest import LiveServer

TOOL_SCOPES = ["mcp", "files:write", "payments"]


def prm(live: LiveServer, slug: str) -> dict[str, object]:
    response = httpx2.get(f"{live.url}/.well-known/oauth-protected-resource/t/{slug}/mcp", timeout=10)
    assert response.status_code == 200, response.text
    document: dict[str, object] = response.json()
    return document


def test_the_demo_tenants_metadata_lists_mcp_and_the_scopes_its_tools_declare(live: LiveServer) -> None:
    document = prm(live, "demo")
    assert document["scopes_supported"] == TOOL_SCOPES
    assert document["resource"] == live.mcp_url()


def test_an_unknown_tenants_metadata_lists_the_same_scopes(live: LiveServer) -> None:
    assert prm(live, "nowhere")["scopes_supported"] == TOOL_SCOPES


def test_the_authorization_server_offers_the_tool_scopes_and_no_operator_scope(live: LiveServer) -> None:
    metadata = httpx2.get(f"{live.url}/.well-known/oauth-authorization-server", timeout=10).json()
    assert set(TOOL_SCOPES) <= set(metadata["scopes_supported"])
    assert not OPERATOR_SCOPES & set(metadata["scopes_supported"])
