"""The documented examples: a form question, a confirmation that branches on every outcome,
an alternative offered when the first choice is full, and a prompt that asks first."""

from __future__ import annotations

import datetime
from typing import Annotated, Any

from mcp.server.elicitation import AcceptedElicitation, CancelledElicitation, DeclinedElicitation, ElicitationResult
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.resolve import Resolve
from pydantic import BaseModel, Field

from demo.models import Booking, File, Folder
from tools_app.toolsets import Elicit, Toolset, tenant_of

toolset = Toolset(
    description="Documented examples: provision, delete_folder, book_table, briefing",
    scopes={"files:write": "Delete folders and the files in them"},
)

FULLY_BOOKED = {datetime.date(2025, 12, 25)}


class Region(BaseModel):
    region: str = Field(description="Cloud region, e.g. eu-west-1")


async def ask_region() -> Elicit[Region]:
    return Elicit("Which region should the database live in?", Region)


@toolset.tool()
async def provision(name: str, region: Annotated[Region, Resolve(ask_region)]) -> str:
    """Provision a database, asking which region it should live in."""
    return f"Provisioned '{name}' in {region.region}."


class Confirm(BaseModel):
    ok: bool


async def confirm_delete(path: str, ctx: Context) -> Confirm | Elicit[Confirm]:
    """Ask only when the folder is not empty: an empty folder needs no round trip."""
    tenant = tenant_of(ctx)
    file_count = await File.objects.filter(folder__tenant_id=tenant.id, folder__path=path).acount()
    if file_count == 0:
        return Confirm(ok=True)
    return Elicit(f"{path} has {file_count} file(s). Delete anyway?", Confirm)


@toolset.tool(scopes=["files:write"], audit_args=["path"])
async def delete_folder(
    path: str,
    ctx: Context,
    confirm: Annotated[ElicitationResult[Confirm], Resolve(confirm_delete)],
) -> str:
    """Delete a folder, asking for confirmation when it is not empty."""
    match confirm:
        case AcceptedElicitation(data=Confirm(ok=True)):
            await Folder.objects.filter(tenant_id=tenant_of(ctx).id, path=path).adelete()
            return f"deleted {path}"
        case AcceptedElicitation():
            return "kept the folder"
        case DeclinedElicitation():
            return "declined: folder not deleted"
        case CancelledElicitation():
            return "cancelled: folder not deleted"
    raise ToolError("unexpected elicitation outcome")


class AlternativeDate(BaseModel):
    accept_alternative: bool = Field(description="Try another date?")
    date: str = Field(default="2025-12-26", description="Alternative date (YYYY-MM-DD)")


ALTERNATIVE_OFFERS = 3
"""How many times book_table offers another date before it gives up (see `_offer_again`)."""


def _is_full(date: str) -> bool:
    try:
        return datetime.date.fromisoformat(date) in FULLY_BOOKED
    except ValueError:
        return False  # not a date: the tool says so


def _ask_for_another(date: str, party_size: int) -> Elicit[AlternativeDate]:
    return Elicit(f"No tables for {party_size} on {date}. Would you like to try another date?", AlternativeDate)


async def first_offer(date: datetime.date, party_size: int) -> AlternativeDate | Elicit[AlternativeDate]:
    if date not in FULLY_BOOKED:
        return AlternativeDate(accept_alternative=True, date=date.isoformat())
    return _ask_for_another(date.isoformat(), party_size)


first_offer.wire_name = "alternative"  # type: ignore[attr-defined]


def _offer_again(previous: Any, level: int) -> Any:
    """The accepted date goes through book_table's check again: a date that is full too is
    asked about again. A resolver asks one question and the SDK plans the questions at
    registration, so each further offer is its own resolver, depending on the one before."""

    async def offer(
        party_size: int, answer: ElicitationResult[AlternativeDate]
    ) -> AlternativeDate | Elicit[AlternativeDate]:
        if not isinstance(answer, AcceptedElicitation) or not answer.data.accept_alternative:
            return AlternativeDate(accept_alternative=False)
        if not _is_full(answer.data.date):
            return answer.data
        return _ask_for_another(answer.data.date, party_size)

    offer.__qualname__ = f"alternative_date_{level}"
    offer.__annotations__ = {
        "party_size": int,
        "answer": Annotated[ElicitationResult[AlternativeDate], Resolve(previous)],
        "return": AlternativeDate | Elicit[AlternativeDate],
    }
    offer.wire_name = f"alternative_{level}"  # type: ignore[attr-defined]
    return offer


alternative_date: Any = first_offer
for _level in range(2, ALTERNATIVE_OFFERS + 1):
    alternative_date = _offer_again(alternative_date, _level)


@toolset.tool()
async def book_table(
    date: datetime.date,
    party_size: Annotated[int, Field(ge=1, le=20)],
    ctx: Context,
    alternative: Annotated[ElicitationResult[AlternativeDate], Resolve(alternative_date)],
) -> str:
    """Book a table; when the date is full, offer another one. Says the booking's id (for pay_deposit)."""
    if not isinstance(alternative, AcceptedElicitation) or not alternative.data.accept_alternative:
        return "No booking made."
    try:
        booked = datetime.date.fromisoformat(alternative.data.date)
    except ValueError:
        raise ToolError(f"date: {alternative.data.date!r} is not a date (YYYY-MM-DD)") from None
    if booked in FULLY_BOOKED:
        last = booked.isoformat()
        return f"No booking made: no tables for {party_size} on {last} either, after {ALTERNATIVE_OFFERS} offers."
    booking = await Booking.objects.acreate(tenant_id=tenant_of(ctx).id, date=booked, party_size=party_size)
    return f"Booked a table for {party_size} on {booked.isoformat()} (booking {booking.pk})."


class Audience(BaseModel):
    audience: str = Field(description="Who will read the briefing")


async def ask_audience() -> Elicit[Audience]:
    return Elicit("Who is the briefing for?", Audience)


@toolset.prompt()
async def briefing(audience: Annotated[Audience, Resolve(ask_audience)]) -> str:
    """A briefing prompt, tailored to its audience."""
    return f"Write a briefing for {audience.audience}."
