"""An audit row's request id is the ``X-Request-ID`` its response returned, and the id every log
line of the call carries: a row leads to the call's lines, and a line to its row."""

from __future__ import annotations

from tests.audit.conftest import last_id, rows_after
from tests.conftest import Cast, LiveServer
from tests.mcp.clients import modern_post
from tests.operate.conftest import json_lines


def test_the_row_the_response_and_the_log_line_share_one_request_id(audited: LiveServer, cast: Cast) -> None:
    token = cast.token(audited, "bob")
    audited.mark_log()
    mark = last_id()

    params = {"name": "book_table", "arguments": {"date": "someday", "party_size": 2}}
    response = modern_post(audited.mcp_url(), "tools/call", params, token, **{"Mcp-Name": "book_table"})
    assert response.json()["result"]["isError"] is True

    [row] = rows_after(mark, 1, tenant__slug="demo")
    assert row.request_id == response.headers["x-request-id"]
    [line] = [line for line in json_lines(audited.wait_for_log("rejected arguments")) if "rejected" in line["message"]]
    assert (line["request_id"], line["tool"], line["tenant"]) == (row.request_id, "book_table", "demo")
