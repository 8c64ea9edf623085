"""A tool names the arguments safe to record in full (``audit_args``); a name it does not take is
refused where it is written, since a misspelling would quietly record nothing."""

from __future__ import annotations

import pytest

from tools_app.toolsets import Toolset, UnknownAuditArgument


def test_a_tool_lists_its_safe_arguments_and_a_misspelt_one_is_refused() -> None:
    toolset = Toolset("files")

    @toolset.tool(audit_args=["path"])
    async def remove(path: str, reason: str) -> str:
        return path

    assert toolset.tool_audit_args() == {"remove": ("path",)}
    with pytest.raises(UnknownAuditArgument, match="marks pth safe to audit, which it does not take"):

        @toolset.tool(audit_args=["pth"])
        async def remove_again(path: str) -> str:
            return path
