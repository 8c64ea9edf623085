"""A call refused 403 ``insufficient_scope`` before the SDK sees it is recorded ``refused_scope``
by both entries, with the request id its response carries; the argument its tool marks safe
(`delete_folder`'s ``path``) is recorded in full."""

from __future__ import annotations

import pytest

from tests.audit.conftest import last_id, rows_after
from tests.conftest import Cast, LiveServer
from tests.mcp.test_a_tool_call_without_its_scope_is_refused_naming_every_scope_it_needs import call


@pytest.mark.parametrize("entry", ["2026-07-28", "2025-11-25"])
def test_a_call_without_its_scope_is_recorded_refused_scope(audited: LiveServer, cast: Cast, entry: str) -> None:
    path = cast.folder(["a.txt"])
    token = cast.token(audited, "alice", scope="mcp")
    mark = last_id()

    response = call(audited, entry, token, "delete_folder", {"path": path})
    assert response.status_code == 403

    [row] = rows_after(mark, 1, tenant__slug="demo", tool="delete_folder")
    assert (row.outcome, row.user, row.generation, row.arguments) == (
        "refused_scope",
        cast.user("alice"),
        entry,
        {"path": path},
    )
    assert row.request_id == response.headers["x-request-id"]
    assert cast.folder_exists(path)
