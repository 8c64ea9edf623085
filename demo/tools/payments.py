"""URL-mode examples for the demo tenant: a deposit paid on a checkout page, a refund that waits
for a staff approval, and a booking that mixes a form question with a payment. All survive
restarts and finish from whichever process."""

from __future__ import annotations

import datetime
from decimal import Decimal
from typing import Annotated

from mcp.server.elicitation import AcceptedElicitation, ElicitationResult
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.resolve import Resolve
from pydantic import Field

from approvals.ui_views import APPROVAL_VIEW, PAYMENT_VIEW
from demo.models import Booking
from demo.tools.demo import FULLY_BOOKED, AlternativeDate, alternative_date
from tools_app.toolsets import tenant_of
from tools_app.urlmode import (
    Approval,
    Cancelled,
    Completed,
    Declined,
    Expired,
    Payment,
    UrlModeToolset,
    UrlOutcome,
    url_step,
)

toolset = UrlModeToolset(
    description="URL-mode examples: pay_deposit, book_table_with_deposit (payments), request_refund (staff approval)",
    scopes={"payments": "Pay deposits and ask for refunds (each payment still opens a page you confirm)"},
)

DEPOSIT = Decimal("20.00")


@url_step
async def deposit(booking_id: int, ctx: Context) -> Payment:
    """The booking's 20 EUR deposit, paid once per booking (a repeated call reuses the payment)."""
    booking = await Booking.objects.filter(tenant_id=tenant_of(ctx).id, pk=booking_id).afirst()
    if booking is None:
        raise ToolError(f"there is no booking {booking_id}")
    return Payment(
        reference=f"deposit-{booking_id}",
        amount=DEPOSIT,
        currency="EUR",
        description=f"the deposit for booking {booking_id} ({booking.party_size} on {booking.date.isoformat()})",
    )


@toolset.tool(scopes=["payments"], ui=PAYMENT_VIEW)
async def pay_deposit(booking_id: int, paid: Annotated[UrlOutcome, Resolve(deposit)]) -> str:
    """Confirm a booking by paying its 20 EUR deposit."""
    match paid:
        case Completed(receipt=receipt):
            return (
                f"Booking {booking_id} confirmed: deposit of {receipt['amount']} {receipt['currency']} paid "
                f"(receipt {receipt['provider_reference']})."
            )
        case Declined():
            return f"Booking {booking_id} not confirmed: the payment was declined."
        case Expired():
            return f"Booking {booking_id} not confirmed: the payment expired."
        case Cancelled():
            return f"Booking {booking_id} not confirmed: the payment was cancelled."
    raise ToolError("unexpected payment outcome")


@url_step
async def staff_approval(order_id: str, amount: Decimal) -> Approval:
    return Approval(
        reference=f"refund-{order_id}",
        reason=f"refund {amount:.2f} EUR for order {order_id}",
        amount=amount,
        currency="EUR",
    )


@toolset.tool(scopes=["payments"], ui=APPROVAL_VIEW)
async def request_refund(
    order_id: str,
    amount: Annotated[Decimal, Field(gt=0, max_digits=12, decimal_places=2)],
    decision: Annotated[UrlOutcome, Resolve(staff_approval)],
) -> str:
    """Refund an order; a staff member approves or denies it first."""
    match decision:
        case Completed(receipt=receipt):
            note = f" ({receipt['note']})" if receipt.get("note") else ""
            return f"Refund of {amount:.2f} EUR for order {order_id} approved by {receipt.get('by') or 'staff'}{note}."
        case Declined(note=note):
            return f"Refund for order {order_id} denied{': ' + note if note else ''}."
        case Expired():
            return f"Refund for order {order_id} not decided in time: the request expired."
        case Cancelled():
            return f"Refund for order {order_id} cancelled."
    raise ToolError("unexpected approval outcome")


Choice = Annotated[ElicitationResult[AlternativeDate], Resolve(alternative_date)]


def chosen_date(choice: ElicitationResult[AlternativeDate]) -> datetime.date | None:
    if not isinstance(choice, AcceptedElicitation) or not choice.data.accept_alternative:
        return None
    try:
        return datetime.date.fromisoformat(choice.data.date)
    except ValueError:
        raise ToolError(f"date: {choice.data.date!r} is not a date (YYYY-MM-DD)") from None


@url_step
async def table_deposit(party_size: int, choice: Choice) -> Payment | UrlOutcome:
    """Asked only once the date is settled (a form question first when the date is full)."""
    date = chosen_date(choice)
    if date is None or date in FULLY_BOOKED:
        return Cancelled("", reason="no date")
    return Payment(
        reference=f"table-{date.isoformat()}-{party_size}",
        amount=DEPOSIT,
        currency="EUR",
        description=f"the deposit for a table for {party_size} on {date.isoformat()}",
    )


@toolset.tool(scopes=["payments"], ui=PAYMENT_VIEW)
async def book_table_with_deposit(
    date: datetime.date,
    party_size: Annotated[int, Field(ge=1, le=20)],
    ctx: Context,
    choice: Choice,
    paid: Annotated[UrlOutcome, Resolve(table_deposit)],
) -> str:
    """Book a table and pay its 20 EUR deposit; when the date is full, offer another one first."""
    booked = chosen_date(choice)
    if booked is None or booked in FULLY_BOOKED or not isinstance(paid, Completed):
        return "No booking made."
    booking = await Booking.objects.acreate(tenant_id=tenant_of(ctx).id, date=booked, party_size=party_size)
    return (
        f"Booked a table for {party_size} on {booked.isoformat()} (booking {booking.pk}); "
        f"deposit of {paid.receipt['amount']} {paid.receipt['currency']} paid."
    )
