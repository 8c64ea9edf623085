"""The documented examples: a form question, a confirmation that branches on every outcome,
an alternative offered when the first choice is full, and a prompt that asks first."""

from __future__ import annotations

import datetime
from typing import Annotated

from mcp.server.elicitation import AcceptedElicitation, CancelledElicitation, DeclinedElicitation, ElicitationResult
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.resolve import Resolve
from pydantic import BaseModel, Field

from tools_app.models import Booking, File, Folder
from tools_app.toolsets import Elicit, Toolset, tenant_of

toolset = Toolset(description="Documented examples: provision, delete_folder, book_table, briefing")

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


@toolset.tool()
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
    accept_alternative: bool = Field(description="Book another date instead?")
    date: str = Field(default="2025-12-26", description="The other date (YYYY-MM-DD)")


async def alternative_date(date: datetime.date, party_size: int) -> AlternativeDate | Elicit[AlternativeDate]:
    if date not in FULLY_BOOKED:
        return AlternativeDate(accept_alternative=True, date=date.isoformat())
    return Elicit(f"No table for {party_size} on {date.isoformat()}. Would you like another date?", AlternativeDate)


@toolset.tool()
async def book_table(
    date: datetime.date,
    party_size: Annotated[int, Field(ge=1, le=20)],
    ctx: Context,
    choice: Annotated[ElicitationResult[AlternativeDate], Resolve(alternative_date)],
) -> str:
    """Book a table; when the date is full, offer another one."""
    if not isinstance(choice, AcceptedElicitation) or not choice.data.accept_alternative:
        return "No booking made."
    try:
        booked = datetime.date.fromisoformat(choice.data.date)
    except ValueError:
        raise ToolError(f"date: {choice.data.date!r} is not a date (YYYY-MM-DD)") from None
    if booked in FULLY_BOOKED:
        return f"No booking made: {booked.isoformat()} is full too."
    await Booking.objects.acreate(tenant_id=tenant_of(ctx).id, date=booked, party_size=party_size)
    return f"Booked a table for {party_size} on {booked.isoformat()}."


class Audience(BaseModel):
    audience: str = Field(description="Who will read the briefing")


async def ask_audience() -> Elicit[Audience]:
    return Elicit("Who is the briefing for?", Audience)


@toolset.prompt()
async def briefing(audience: Annotated[Audience, Resolve(ask_audience)]) -> str:
    """A briefing prompt, tailored to its audience."""
    return f"Write a briefing for {audience.audience}."
