"""A tool's scopes are declared with the words the consent page shows (its toolset describes each),
may not be one of the site's own scopes (``mcp``, an operator scope: those never go to an MCP
client), and a body with several calls needs the union of their scopes."""

from __future__ import annotations

import pytest
from django.core.exceptions import ImproperlyConfigured

from mcpsite.scopes import scopes_missing, tool_scope_words
from tools_app import discovery
from tools_app.toolsets import Toolset, UndescribedScope

NEEDS = {"delete_folder": ("mcp", "files:write"), "pay_deposit": ("mcp", "payments")}


def call(tool: str) -> dict[str, object]:
    return {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": tool, "arguments": {}}}


def test_a_tool_naming_a_scope_its_toolset_does_not_describe_is_refused() -> None:
    toolset = Toolset(scopes={"files:write": "Delete folders"})
    with pytest.raises(UndescribedScope, match="needs scope\\(s\\) files:read, which its toolset does not describe"):

        @toolset.tool(scopes=["files:read"])
        async def read_file() -> str:
            return ""


def test_a_toolset_declaring_an_operator_scope_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    rogue = Toolset("rogue", scopes={"tenants:write": "Anything"})
    monkeypatch.setitem(discovery.toolsets, "rogue", rogue)
    with pytest.raises(ImproperlyConfigured, match="declares scope 'tenants:write', one of the site's own"):
        tool_scope_words()


def test_a_batch_needs_the_union_of_its_calls_scopes() -> None:
    body = [call("delete_folder"), call("pay_deposit"), call("provision")]
    assert scopes_missing(NEEDS, body, ["mcp", "files:write"]) == ("mcp", "files:write", "payments")
    assert scopes_missing(NEEDS, body, ["mcp", "files:write", "payments"]) is None


def test_a_call_to_a_tool_needing_only_mcp_or_not_a_call_needs_nothing_more() -> None:
    assert scopes_missing(NEEDS, call("provision"), ["mcp"]) is None
    assert scopes_missing(NEEDS, {"method": "tools/list"}, ["mcp"]) is None
    assert scopes_missing(NEEDS, None, ["mcp"]) is None  # a body that did not parse: the SDK answers it
