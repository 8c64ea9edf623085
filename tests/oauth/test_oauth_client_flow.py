"""The whole flow with the SDK's own client-side OAuth, as a real MCP client does it: discovery
from the 401, metadata, dynamic registration, authorization code with PKCE through the real login
and consent pages, token, then a demo tool with a form question, in both generations."""

from __future__ import annotations

from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthClientMetadata, OAuthToken
from oauth2_provider.models import AccessToken, Application

from tests.conftest import Cast, LiveServer
from tests.mcp.clients import MODES, accept, answering, text
from tests.oauth.browser import CALLBACK, chromium_page, sign_in_and_decide


class MemoryStorage:
    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client_info: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client_info

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client_info = client_info


@pytest.mark.parametrize("mode", MODES)
def test_sdk_client_signs_in_by_itself_and_calls_a_tool(live: LiveServer, cast: Cast, mode: str) -> None:
    storage = MemoryStorage()
    asked: list[str] = []

    async def scenario() -> str:
        async with chromium_page() as page:
            decision: dict[str, Any] = {}

            async def redirect_handler(url: str) -> None:
                decision.update(
                    await sign_in_and_decide(page, url, "alice", "alice-password-1", shot=f"consent-{mode}")
                )

            async def callback_handler() -> AuthorizationCodeResult:
                # The redirect's parameters as a real callback relays them (the SDK checks `iss`, RFC 9207).
                return AuthorizationCodeResult(
                    code=decision["code"][0], state=decision.get("state", [None])[0], iss=decision.get("iss", [None])[0]
                )

            provider = OAuthClientProvider(
                server_url=live.mcp_url(),
                client_metadata=OAuthClientMetadata(
                    client_name="SDK test client",
                    redirect_uris=[CALLBACK],  # type: ignore[list-item]
                    grant_types=["authorization_code", "refresh_token"],
                    token_endpoint_auth_method="none",
                ),
                storage=storage,
                redirect_handler=redirect_handler,
                callback_handler=callback_handler,
            )
            http = httpx2.AsyncClient(auth=provider, timeout=30)
            async with (
                http,
                Client(
                    streamable_http_client(live.mcp_url(), http_client=http),
                    mode=mode,
                    elicitation_callback=answering(accept(region="eu-west-1"), asked),
                ) as client,
            ):
                return text(await client.call_tool("provision", {"name": "orders"}))

    assert anyio.run(scenario) == "Provisioned 'orders' in eu-west-1."
    assert asked == ["Which region should the database live in?"]
    # The client registered itself, and its token is alice's, for the demo tenant only.
    assert storage.client_info is not None and storage.tokens is not None
    application = Application.objects.get(client_id=storage.client_info.client_id)
    assert application.client_type == Application.CLIENT_PUBLIC
    token = AccessToken.objects.get(token=storage.tokens.access_token)
    assert token.user == cast.user("alice")
    assert token.resource == [live.mcp_url()]
    assert token.scope == "mcp"
