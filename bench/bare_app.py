"""Baseline 1, the floor of our own stack: the SDK's `MCPServer` with the benchmark's two tools,
an in-memory token check and the SDK's built-in AES-GCM requestState codec, and nothing of ours.

Served exactly like mcpsite (`python -m mcp_server.serve --app bench.bare_app:app`). Configured from the
environment by `bench/bench.py`: BENCH_PORT, BENCH_TOKEN, BENCH_STATE_KEY.
"""

from __future__ import annotations

import os
from typing import Annotated

from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.resolve import Elicit, Resolve
from mcp.server.request_state import AESGCMRequestStateCodec, RequestStateSecurity
from mcp.server.transport_security import TransportSecuritySettings
from pydantic import BaseModel, Field

PORT = os.environ.get("BENCH_PORT", "8001")
TOKEN = os.environ.get("BENCH_TOKEN", "bench-token")
ROOT = f"http://127.0.0.1:{PORT}"
RESOURCE = f"{ROOT}/mcp"
ISSUER = ROOT


class InMemoryVerifier:
    """One known token, checked against a dict: no database, no cache to miss."""

    def __init__(self, token: str) -> None:
        self._tokens = {token: ("bench-client", "1")}

    async def verify_token(self, token: str) -> AccessToken | None:
        known = self._tokens.get(token)
        if known is None:
            return None
        client_id, subject = known
        return AccessToken(
            token=token,
            client_id=client_id,
            scopes=["mcp"],
            expires_at=None,
            resource=RESOURCE,
            subject=subject,
            claims={"iss": ISSUER},
        )


server: MCPServer[None] = MCPServer(
    name="bench-bare",
    version="1",
    token_verifier=InMemoryVerifier(TOKEN),
    auth=AuthSettings.model_validate(
        {
            "issuer_url": ISSUER,
            "resource_server_url": RESOURCE,
            "required_scopes": ["mcp"],
            "validate_token_resource": True,
        }
    ),
    request_state_security=RequestStateSecurity(
        codec=AESGCMRequestStateCodec([os.environ.get("BENCH_STATE_KEY", "0" * 64)]), ttl=600
    ),
    log_level="INFO",  # as mcpsite (MCPSITE_LOG_LEVEL defaults to INFO)
)


# The same two tools as demo/tools/bench.py.
@server.tool()
async def echo(text: str) -> str:
    """Return the text (the plain-call benchmark)."""
    return f"echo: {text}"


class Colour(BaseModel):
    colour: str = Field(description="A colour")


async def ask_colour() -> Elicit[Colour]:
    return Elicit("Which colour?", Colour)


@server.tool()
async def greet(name: str, colour: Annotated[Colour, Resolve(ask_colour)]) -> str:
    """Greet someone in a colour they pick (the two-round benchmark: one form question)."""
    return f"hello {name} in {colour.colour}"


app = server.streamable_http_app(
    streamable_http_path="/mcp",
    transport_security=TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=["127.0.0.1:*", "localhost:*"],
        allowed_origins=["http://127.0.0.1:*", "http://localhost:*"],
    ),
)
