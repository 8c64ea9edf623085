"""The spec's step-up flow with the SDK's own `OAuthClientProvider`: the client signs in asking for
what the first challenge names (``mcp``), calls `delete_folder`, is answered 403
``insufficient_scope`` naming ``mcp files:write``, re-authorizes with that scope through the real
consent page (the member allows it) and the retried call succeeds, in both generations."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs, urlsplit

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientMetadata
from oauth2_provider.models import AccessToken

from tests.conftest import Cast, LiveServer
from tests.mcp.clients import MODES, text
from tests.oauth.browser import CALLBACK, chromium_page, sign_in_and_decide
from tests.oauth.test_oauth_client_flow import MemoryStorage


@pytest.mark.parametrize("mode", MODES)
def test_the_sdk_client_steps_up_to_files_write_and_deletes_the_folder(live: LiveServer, cast: Cast, mode: str) -> None:
    path = cast.folder([])
    storage = MemoryStorage()
    asked_scopes: list[str] = []

    async def scenario() -> str:
        async with chromium_page() as page:
            decision: dict[str, Any] = {}

            async def redirect_handler(url: str) -> None:
                asked_scopes.append(parse_qs(urlsplit(url).query)["scope"][0])
                decision.clear()
                decision.update(await sign_in_and_decide(page, url, "alice", "alice-password-1"))

            async def callback_handler() -> AuthorizationCodeResult:
                return AuthorizationCodeResult(
                    code=decision["code"][0], state=decision.get("state", [None])[0], iss=decision.get("iss", [None])[0]
                )

            provider = OAuthClientProvider(
                server_url=live.mcp_url(),
                client_metadata=OAuthClientMetadata(
                    client_name="SDK step-up client",
                    redirect_uris=[CALLBACK],  # type: ignore[list-item]
                    grant_types=["authorization_code", "refresh_token"],
                    token_endpoint_auth_method="none",
                ),
                storage=storage,
                redirect_handler=redirect_handler,
                callback_handler=callback_handler,
            )
            http = httpx2.AsyncClient(auth=provider, timeout=30)
            async with http, Client(streamable_http_client(live.mcp_url(), http_client=http), mode=mode) as client:
                # Listed first, as a client does before it calls: the provider steps up on a 403 to
                # a request it sends with a token, not on the retry it sends right after signing
                # in (the SDK's flow ends there), which a first request at 2026-07-28 would be.
                assert "delete_folder" in [tool.name for tool in (await client.list_tools()).tools]
                return text(await client.call_tool("delete_folder", {"path": path}))

    assert anyio.run(scenario) == f"deleted {path}"
    assert not cast.folder_exists(path)
    # First what the 401 named, then the union with what the 403 named (SEP-2350).
    assert asked_scopes == ["mcp", "mcp files:write"]
    assert storage.tokens is not None
    assert AccessToken.objects.get(token=storage.tokens.access_token).scope == "mcp files:write"
