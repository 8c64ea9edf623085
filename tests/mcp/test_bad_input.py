"""Bad input gets a clear error and changes nothing."""

from __future__ import annotations

import json

import anyio
import pytest

from tests.conftest import Cast, LiveServer
from tests.mcp.clients import MODES, connect, modern_post, never, raw_post


def test_malformed_json_is_a_parse_error(live: LiveServer, cast: Cast) -> None:
    response = raw_post(live.mcp_url(), b'{"jsonrpc": "2.0", "id": 1, "method": ', cast.token(live))
    assert response.status_code == 400
    assert response.json()["error"]["code"] == -32700


@pytest.mark.parametrize("mode", MODES)
def test_wrong_argument_types_are_a_tool_error_naming_the_argument(live: LiveServer, cast: Cast, mode: str) -> None:
    token = cast.token(live)

    async def scenario() -> tuple[bool, str]:
        async with connect(live.mcp_url(), token, mode=mode, answer=never) as c:
            result = await c.call_tool("book_table", {"date": "someday", "party_size": "two"})
            return bool(result.is_error), str(result.content[0].text)  # type: ignore[union-attr]

    is_error, message = anyio.run(scenario)
    assert is_error
    assert "date" in message and "party_size" in message


def test_body_over_the_limit_is_413(live: LiveServer, cast: Cast) -> None:
    big = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "provision", "arguments": {"name": "x" * (2 * 1024 * 1024)}},
        }
    ).encode()
    assert raw_post(live.mcp_url(), big, cast.token(live)).status_code == 413


@pytest.mark.parametrize("path", ["/t/demo/mcp/extra", "/t//mcp", "/t/demo/"])
def test_a_path_that_is_no_mcp_endpoint_is_404(live: LiveServer, path: str) -> None:
    # An unknown tenant's endpoint is not one of these: it answers as a private tenant does
    # (tests/mcp/test_an_unknown_tenant_answers_as_a_private_one.py).
    assert raw_post(f"{live.url}{path}", b"{}").status_code == 404


def test_foreign_host_header_is_refused(live: LiveServer, cast: Cast) -> None:
    """DNS-rebinding protection: the MCP app checks Host itself (Django's ALLOWED_HOSTS never sees it)."""
    token = cast.token(live)
    assert modern_post(live.mcp_url(), "tools/list", token=token).status_code == 200
    assert modern_post(live.mcp_url(), "tools/list", token=token, Host="evil.example").status_code == 421
    assert modern_post(live.mcp_url(), "tools/list", token=token, Origin="http://evil.example").status_code == 403
