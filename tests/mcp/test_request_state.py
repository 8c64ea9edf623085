"""2026-07-28: a requestState that is tampered, truncated, expired or presented for another
request, tenant or user gets exactly the frozen error, and the server log says which check failed."""

from __future__ import annotations

import base64
from collections import Counter
from collections.abc import Callable
from typing import Any

import anyio
import pytest
from mcp.shared.exceptions import MCPError
from mcp_types import ElicitResult, InputRequiredResult, InputResponses

from tests.conftest import Cast, LiveServer
from tests.mcp.clients import connect, text

INVALID = {"code": -32602, "message": "Invalid or expired requestState"}


async def first_round(url: str, token: str | None, name: str = "provision", args: dict[str, Any] | None = None) -> str:
    async with connect(url, token) as c:
        result = await c.session.call_tool(name, args or {"name": "orders"}, allow_input_required=True)
        assert isinstance(result, InputRequiredResult)
        assert result.request_state is not None
        return result.request_state


def region_answer(first: InputRequiredResult | None = None) -> dict[str, ElicitResult]:
    # The wire key is the resolver's module:qualname.
    return {"region": ElicitResult(action="accept", content={"region": "eu-west-1"})}


async def retry(
    url: str, token: str | None, state: str, name: str = "provision", args: dict[str, Any] | None = None
) -> Any:
    async with connect(url, token) as c:
        return await c.session.call_tool(
            name,
            args or {"name": "orders"},
            input_responses=region_answer(),  # type: ignore[arg-type]
            request_state=state,
            allow_input_required=True,
        )


def rejected(call: Callable[[], Any]) -> dict[str, Any]:
    """Run `call`, which must fail with an MCP error, and give that error's code and message."""
    try:
        anyio.run(call)
    except BaseException as exc:  # the client's task group may wrap it in an ExceptionGroup
        error = find_error(exc)
        if error is None:
            raise
        return {"code": error.code, "message": error.message}
    raise AssertionError("the call was accepted")


def find_error(exc: BaseException) -> MCPError | None:
    if isinstance(exc, MCPError):
        return exc
    for inner in getattr(exc, "exceptions", ()):
        found = find_error(inner)
        if found is not None:
            return found
    return None


def flip_a_sealed_char(state: str) -> str:
    """Change one character of the tag. Not the last one: when the length is not a multiple of four
    its low bits are base64 padding, and changing only those is refused as malformed, not as a bad seal."""
    return state[:-2] + ("A" if state[-2] != "A" else "B") + state[-1]


def test_untouched_state_completes_the_call(live: LiveServer, cast: Cast) -> None:
    token = cast.token(live)
    state = anyio.run(first_round, live.mcp_url(), token)
    result = anyio.run(retry, live.mcp_url(), token, state)
    assert text(result) == "Provisioned 'orders' in eu-west-1."


@pytest.mark.parametrize(
    ("mangle", "reason"),
    [
        (flip_a_sealed_char, "seal"),
        (lambda s: s[:24], "malformed"),
        (lambda s: "k1." + base64.urlsafe_b64encode(b"\0" * 40).decode().rstrip("="), "unknown or retired key"),
        (lambda s: "not-a-state", "malformed"),
    ],
    ids=["tampered", "truncated", "unknown-key", "garbage"],
)
def test_mangled_state_is_refused(live: LiveServer, cast: Cast, mangle: Callable[[str], str], reason: str) -> None:
    token = cast.token(live)
    state = anyio.run(first_round, live.mcp_url(), token)
    live.mark_log()
    assert rejected(lambda: retry(live.mcp_url(), token, mangle(state))) == INVALID
    live.wait_for_log(f"requestState rejected on tools/call: {reason}")


def test_state_for_other_arguments_is_refused(live: LiveServer, cast: Cast) -> None:
    token = cast.token(live)
    state = anyio.run(first_round, live.mcp_url(), token)
    live.mark_log()
    assert rejected(lambda: retry(live.mcp_url(), token, state, args={"name": "billing"})) == INVALID
    live.wait_for_log("requestState rejected on tools/call: request binding")


def test_state_for_another_tool_is_refused(live: LiveServer, cast: Cast) -> None:
    token = cast.token(live)
    state = anyio.run(first_round, live.mcp_url(), token)
    live.mark_log()
    call = lambda: retry(live.mcp_url(), token, state, name="book_table", args={"name": "orders"})  # noqa: E731
    assert rejected(call) == INVALID
    live.wait_for_log("requestState rejected on tools/call: request binding")


def test_state_from_another_tenant_is_refused(live: LiveServer, cast: Cast) -> None:
    state = anyio.run(first_round, live.mcp_url("demo"), cast.token(live, "alice", "demo"))
    live.mark_log()
    mallory = cast.token(live, "mallory", "other")
    assert rejected(lambda: retry(live.mcp_url("other"), mallory, state)) == INVALID
    live.wait_for_log("requestState rejected on tools/call: audience")


def test_state_from_another_user_is_refused(live: LiveServer, cast: Cast) -> None:
    state = anyio.run(first_round, live.mcp_url(), cast.token(live, "alice"))
    live.mark_log()
    bob = cast.token(live, "bob")
    assert rejected(lambda: retry(live.mcp_url(), bob, state)) == INVALID
    live.wait_for_log("requestState rejected on tools/call: principal")


def test_state_minted_for_a_public_tenant_is_refused_with_a_token(live: LiveServer, cast: Cast) -> None:
    """Unbound state (public tenant) cannot be replayed into a principal-bound tenant either."""
    state = anyio.run(first_round, live.mcp_url("open"), None)
    live.mark_log()
    alice = cast.token(live)
    assert rejected(lambda: retry(live.mcp_url(), alice, state)) == INVALID
    live.wait_for_log("requestState rejected on tools/call: audience")


def test_expired_state_is_refused(server_factory: Callable[..., LiveServer], cast: Cast) -> None:
    server = server_factory(MCPSITE_REQUEST_STATE_TTL="1")
    try:
        token = cast.token(server)
        state = anyio.run(first_round, server.mcp_url(), token)
        anyio.run(anyio.sleep, 1.2)
        server.mark_log()
        assert rejected(lambda: retry(server.mcp_url(), token, state)) == INVALID
        server.wait_for_log("requestState rejected on tools/call: expired")
    finally:
        server.stop()


def test_answered_state_cannot_be_replayed(live: LiveServer, cast: Cast) -> None:
    token = cast.token(live)
    state = anyio.run(first_round, live.mcp_url(), token)
    assert text(anyio.run(retry, live.mcp_url(), token, state)) == "Provisioned 'orders' in eu-west-1."
    live.mark_log()
    assert rejected(lambda: retry(live.mcp_url(), token, state)) == INVALID
    live.wait_for_log("requestState rejected on tools/call: replayed")


def test_concurrent_replays_run_the_tool_once(live: LiveServer, cast: Cast) -> None:
    token, path = cast.token(live), cast.folder(["a.txt"])
    args = {"path": path}
    state = anyio.run(first_round, live.mcp_url(), token, "delete_folder", args)
    answer: InputResponses = {"confirm": ElicitResult(action="accept", content={"ok": True})}
    outcomes: list[str] = []

    async def one() -> None:
        async with connect(live.mcp_url(), token) as c:
            try:
                result = await c.session.call_tool(
                    "delete_folder", args, input_responses=answer, request_state=state, allow_input_required=True
                )
                outcomes.append(text(result))
            except MCPError as exc:
                outcomes.append(exc.message)

    async def five() -> None:
        async with anyio.create_task_group() as tg:
            for _ in range(5):
                tg.start_soon(one)

    anyio.run(five)
    assert Counter(outcomes) == {f"deleted {path}": 1, "Invalid or expired requestState": 4}
    assert not cast.folder_exists(path)


def test_replay_is_refused_without_redis_too(server_factory: Callable[..., LiveServer], cast: Cast) -> None:
    """The embedded default keeps its claims in the database instead of Redis."""
    server = server_factory(MCPSITE_REDIS_URL="")
    try:
        token = cast.token(server)
        state = anyio.run(first_round, server.mcp_url(), token)
        assert text(anyio.run(retry, server.mcp_url(), token, state)) == "Provisioned 'orders' in eu-west-1."
        server.mark_log()
        assert rejected(lambda: retry(server.mcp_url(), token, state)) == INVALID
        server.wait_for_log("requestState rejected on tools/call: replayed")
    finally:
        server.stop()
