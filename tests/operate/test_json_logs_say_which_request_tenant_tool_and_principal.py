"""``MCPSITE_LOG_FORMAT=json``: a live server writes one JSON object a line, and a real SDK client's
tool call logs lines that carry the request id its response returned, the tenant, the tool and the
principal as a keyed hash: never the argument values, the OAuth client id or the subject."""

from __future__ import annotations

import re
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from mcpsite import services
from mcpsite.logs import principal_hash
from tests.conftest import Cast, LiveServer
from tests.mcp.clients import MODES
from tests.operate.conftest import json_lines
from tools_app.principal import Principal

ARGUMENT = "not-a-date-7f3e9c"  # a value only the caller's arguments hold


@pytest.mark.parametrize("mode", MODES)
def test_a_tool_call_logs_its_request_id_tenant_tool_and_principal_hash_and_none_of_its_arguments(
    json_server: LiveServer, cast: Cast, mode: str
) -> None:
    issued = services.token_issue(tenant=cast.tenant("demo"), user=cast.user("alice"), site_root=json_server.url)
    client_id = issued.application.client_id
    call_ids: list[str] = []

    async def note_call_id(response: httpx2.Response) -> None:
        if b'"tools/call"' in response.request.content:
            call_ids.append(response.headers["x-request-id"])

    async def scenario() -> Any:
        http = httpx2.AsyncClient(
            headers={"Authorization": f"Bearer {issued.token}"}, event_hooks={"response": [note_call_id]}
        )
        async with http, Client(streamable_http_client(json_server.mcp_url(), http_client=http), mode=mode) as c:
            return await c.call_tool("book_table", {"date": ARGUMENT, "party_size": 2})

    json_server.mark_log()
    result = anyio.run(scenario)
    assert result.is_error  # the SDK logs the rejected argument's name (never its value) inside the call

    written = json_server.wait_for_log("rejected arguments")
    lines = json_lines(written)
    [line] = [line for line in lines if "rejected arguments" in line["message"]]
    assert call_ids and line["request_id"] == call_ids[-1]
    assert (line["level"], line["logger"], line["tenant"], line["tool"]) == (
        "INFO",
        "mcp.server.mcpserver.server",
        "demo",
        "book_table",
    )
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+\+00:00", line["time"]), line["time"]
    alice = Principal(client_id=client_id, issuer=json_server.url, subject=str(issued.user_id))
    assert line["principal"] == principal_hash(alice)
    assert re.fullmatch(r"[0-9a-f]{16}", line["principal"])
    assert ARGUMENT not in written and client_id not in written


def test_every_line_of_a_starting_server_is_one_json_object(json_server: LiveServer) -> None:
    lines = json_lines(json_server.log())  # from the first line: uvicorn's, Django's, the beat's
    assert {"Application startup complete."} <= {line["message"] for line in lines}
    assert all(
        {"time", "level", "logger", "message", "request_id", "tenant", "tool", "principal"} <= set(line)
        for line in lines
    )
    assert not any("color_message" in line for line in lines)
