"""Every demo tool and the prompt, in both protocol generations, through uvicorn and mcp.Client."""

from __future__ import annotations

import anyio
import pytest
from mcp_types import ElicitResult

from demo.models import Booking
from tests.conftest import Cast, LiveServer
from tests.mcp.clients import MODES, accept, connect, never, text


@pytest.mark.parametrize("mode", MODES)
def test_provision_asks_for_the_region(live: LiveServer, cast: Cast, mode: str) -> None:
    token = cast.token(live)
    asked: list[str] = []

    async def scenario() -> str:
        async with connect(live.mcp_url(), token, mode=mode, answer=accept(region="eu-west-1"), asked=asked) as c:
            return text(await c.call_tool("provision", {"name": "orders"}))

    assert anyio.run(scenario) == "Provisioned 'orders' in eu-west-1."
    assert asked == ["Which region should the database live in?"]


@pytest.mark.parametrize("mode", MODES)
def test_empty_folder_is_deleted_without_a_question(live: LiveServer, cast: Cast, mode: str) -> None:
    token, path = cast.token(live), cast.folder([])

    async def scenario() -> str:
        async with connect(live.mcp_url(), token, mode=mode, answer=never) as c:
            return text(await c.call_tool("delete_folder", {"path": path}))

    assert anyio.run(scenario) == f"deleted {path}"
    assert not cast.folder_exists(path)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    ("action", "content", "reply", "deleted"),
    [
        ("accept", {"ok": True}, "deleted {path}", True),
        ("accept", {"ok": False}, "kept the folder", False),
        ("decline", None, "declined: folder not deleted", False),
        ("cancel", None, "cancelled: folder not deleted", False),
    ],
)
def test_non_empty_folder_branches_on_every_outcome(
    live: LiveServer, cast: Cast, mode: str, action: str, content: dict[str, bool] | None, reply: str, deleted: bool
) -> None:
    token, path = cast.token(live), cast.folder(["main.py", "README.md"])
    asked: list[str] = []

    async def scenario() -> str:
        answer = lambda params: ElicitResult(action=action, content=content)  # type: ignore[arg-type]  # noqa: E731
        async with connect(live.mcp_url(), token, mode=mode, answer=answer, asked=asked) as c:
            return text(await c.call_tool("delete_folder", {"path": path}))

    assert anyio.run(scenario) == reply.format(path=path)
    assert asked == [f"{path} has 2 file(s). Delete anyway?"]
    assert cast.folder_exists(path) is not deleted


@pytest.mark.parametrize("mode", MODES)
def test_folders_belong_to_their_tenant(live: LiveServer, cast: Cast, mode: str) -> None:
    """mallory's tenant has no such folder, so nothing is asked and alice's folder survives."""
    path = cast.folder(["main.py"])
    token = cast.token(live, "mallory", "other")

    async def scenario() -> str:
        async with connect(live.mcp_url("other"), token, mode=mode, answer=never) as c:
            return text(await c.call_tool("delete_folder", {"path": path}))

    assert anyio.run(scenario) == f"deleted {path}"
    assert cast.folder_exists(path, "demo")


@pytest.mark.parametrize("mode", MODES)
def test_full_date_offers_an_alternative_that_is_booked(live: LiveServer, cast: Cast, mode: str) -> None:
    token = cast.token(live)
    before = Booking.objects.filter(date="2025-12-27").count()

    async def scenario() -> str:
        answer = accept(accept_alternative=True, date="2025-12-27")
        async with connect(live.mcp_url(), token, mode=mode, answer=answer) as c:
            return text(await c.call_tool("book_table", {"date": "2025-12-25", "party_size": 2}))

    reply = anyio.run(scenario)
    booking = Booking.objects.filter(date="2025-12-27", party_size=2).latest("pk")
    assert reply == f"Booked a table for 2 on 2025-12-27 (booking {booking.pk})."
    assert Booking.objects.filter(date="2025-12-27", party_size=2).count() == before + 1


@pytest.mark.parametrize("mode", MODES)
def test_declined_alternative_books_nothing(live: LiveServer, cast: Cast, mode: str) -> None:
    token = cast.token(live)
    asked: list[str] = []

    async def scenario() -> list[str]:
        replies = []
        async with connect(live.mcp_url(), token, mode=mode, answer=accept(accept_alternative=False), asked=asked) as c:
            replies.append(text(await c.call_tool("book_table", {"date": "2025-12-25", "party_size": 2})))
        answer = lambda params: ElicitResult(action="decline")  # noqa: E731
        async with connect(live.mcp_url(), token, mode=mode, answer=answer) as c:
            replies.append(text(await c.call_tool("book_table", {"date": "2025-12-25", "party_size": 2})))
        return replies

    assert anyio.run(scenario) == ["No booking made.", "No booking made."]
    assert asked and "2025-12-25" in asked[0]


@pytest.mark.parametrize("mode", MODES)
def test_free_date_is_booked_without_a_question(live: LiveServer, cast: Cast, mode: str) -> None:
    token = cast.token(live)

    async def scenario() -> str:
        async with connect(live.mcp_url(), token, mode=mode, answer=never) as c:
            return text(await c.call_tool("book_table", {"date": "2025-12-24", "party_size": 4}))

    reply = anyio.run(scenario)
    booking = Booking.objects.filter(date="2025-12-24", party_size=4).latest("pk")
    assert reply == f"Booked a table for 4 on 2025-12-24 (booking {booking.pk})."


@pytest.mark.parametrize("mode", MODES)
def test_briefing_prompt_asks_for_its_audience(live: LiveServer, cast: Cast, mode: str) -> None:
    token = cast.token(live)
    asked: list[str] = []

    async def scenario() -> list[tuple[str, str]]:
        async with connect(live.mcp_url(), token, mode=mode, answer=accept(audience="the board"), asked=asked) as c:
            listed = [p.name for p in (await c.list_prompts()).prompts]
            assert listed == ["briefing"]
            result = await c.get_prompt("briefing", {})
            return [(m.role, m.content.text) for m in result.messages]  # type: ignore[union-attr]

    assert anyio.run(scenario) == [("user", "Write a briefing for the board.")]
    assert asked == ["Who is the briefing for?"]


@pytest.mark.parametrize("mode", MODES)
def test_public_tenant_needs_no_token(live: LiveServer, cast: Cast, mode: str) -> None:
    async def scenario() -> str:
        async with connect(live.mcp_url("open"), None, mode=mode, answer=accept(region="us-east-1")) as c:
            return text(await c.call_tool("provision", {"name": "logs"}))

    assert anyio.run(scenario) == "Provisioned 'logs' in us-east-1."
