"""No argument's value reaches an audit row or a log line, whatever the call's outcome, in either
generation: a row keeps the digest of the arguments as the tool's own model reads them, and in
full only the arguments the tool marks safe (``audit_args``: `delete_folder`'s ``path``)."""

from __future__ import annotations

import json
import secrets

import anyio
import pytest
from django.forms.models import model_to_dict

from audit.models import ToolCall
from tests.audit.conftest import last_id, rows_after
from tests.conftest import Cast, LiveServer
from tests.mcp.clients import MODES, accept, connect, modern_post
from tools_app.urlmode import canonical_digest


def everything_in(row: ToolCall) -> str:
    return json.dumps(model_to_dict(row), default=str)


@pytest.mark.parametrize("mode", MODES)
def test_values_stay_out_of_rows_and_log_lines_but_a_safe_path_is_recorded(
    audited: LiveServer, cast: Cast, mode: str
) -> None:
    secret_name, secret_date = f"name-{secrets.token_hex(6)}", f"date-{secrets.token_hex(6)}"
    path = cast.folder([])  # empty: deleted without a question
    token = cast.token(audited, "alice")
    audited.mark_log()
    mark = last_id()

    async def scenario() -> None:
        async with connect(audited.mcp_url(), token, mode=mode, answer=accept(region="eu-west-1")) as client:
            await client.call_tool("provision", {"name": secret_name})  # a question: two rounds at 2026-07-28
            assert (await client.call_tool("book_table", {"date": secret_date, "party_size": 2})).is_error
            await client.call_tool("delete_folder", {"path": path})

    anyio.run(scenario)
    refused = {"name": "provision", "arguments": {"name": [secret_name]}}  # not a string: refused
    answer = modern_post(audited.mcp_url(), "tools/call", refused, token, **{"Mcp-Name": "provision"})
    assert answer.json()["result"]["isError"] is True

    rounds = 2 if mode == "2026-07-28" else 1
    rows = rows_after(mark, rounds + 3, tenant__slug="demo")
    assert [row.tool for row in rows] == ["provision"] * rounds + ["book_table", "delete_folder", "provision"]
    for row in rows:
        assert secret_name not in everything_in(row) and secret_date not in everything_in(row)
    assert [row.arguments for row in rows] == [{}] * (rounds + 1) + [{"path": path}, {}]
    # Arguments the tool's model refused are digested as sent.
    assert rows[-1].arguments_digest == canonical_digest(refused["arguments"])
    assert not cast.folder_exists(path)
    written = audited.log_since_mark()
    assert secret_name not in written and secret_date not in written
    assert "rejected arguments" in written  # the SDK logged the tool error: by field name only
