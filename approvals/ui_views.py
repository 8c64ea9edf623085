"""MCP Apps views of a URL-mode step (`tools_app.mcp_apps`): a payment card (amount, what it is
for, the checkout link, the live status) and an approval card (who must decide, the status, the
decision and its note).

The view learns the call (tool and arguments) from the host and asks `step_status`, an app-only
tool the host calls for it, how the step stands. It finds only the caller's own rows: the row
opened for this tool and these arguments by the same person at this tenant (the status page's
owner rule, `Elicitation.belongs_to`: the user the token names, whichever of their clients), so
another user or tenant finds nothing of it, and a token that names no user is refused. It tells
what the card shows and never a secret: of a payment, its amount, description and checkout URL
(while open), never the provider's session or receipt.
"""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path
from typing import Annotated, Any

from channels.db import database_sync_to_async
from django.conf import settings
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel, Field, ValidationError

from approvals.models import Elicitation
from approvals.outcomes import Decision, Expiry, outcome_from_json
from tools_app.mcp_apps import UI_SCHEME, View
from tools_app.principal import Principal
from tools_app.toolsets import tenant_of
from tools_app.urlmode import arguments_digest

NOT_YOURS = "This step can be shown only to the person it was opened for: call with a token that names your user."


class StepCard(BaseModel):
    """What a step's card shows. ``status`` is the row's (``none`` until the call opened it)."""

    status: str
    kind: str = ""
    amount: str = ""
    currency: str = ""
    description: str = ""
    url: str = ""
    decider: str = ""
    decision: str = ""
    decided_by: str = ""
    note: str = ""
    expires_at: str = ""
    ended_at: str = ""


def _amount(value: Decimal | None) -> str:
    return f"{value:.2f}" if value is not None else ""


def card_of(row: Elicitation, tenant_name: str) -> StepCard:
    card = StepCard(
        status=row.status,
        kind=row.kind,
        description=row.message,
        expires_at=row.expires_at.isoformat(),
        ended_at=row.completed_at.isoformat() if row.completed_at else "",
    )
    # The page to open (the checkout, the approval's status page) while there is something to do there.
    card.url = row.url if row.is_pending else ""
    outcome = outcome_from_json(row.outcome)
    if row.kind == Elicitation.Kind.PAYMENT:
        payment = row.payment
        card.amount, card.currency = _amount(payment.amount), payment.currency
        card.description = payment.description
    else:
        card.amount, card.currency = _amount(row.amount), row.currency
        card.decider = f"Staff of {tenant_name}"
        if isinstance(outcome, Decision):
            card.decision, card.decided_by, card.note = outcome.decision, outcome.by, outcome.note
        elif isinstance(outcome, Expiry):
            card.decision = "expired"
    return card


def _find(*, tenant_id: int, principal: Principal, tool: str, digest: str) -> Elicitation | None:
    _, issuer, subject = principal
    return (
        Elicitation.objects.select_related("payment")
        .filter(tenant_id=tenant_id, issuer=issuer, subject=subject, tool=tool, args_digest=digest)
        .order_by("-created_at")
        .first()
    )


async def _tools_of_view(ctx: Context, view: str) -> list[str]:
    """The tools that point at view `view` (for a host that does not say which tool was called)."""
    uri = f"{UI_SCHEME}mcpsite/{view}.html"
    tools = await ctx.mcp_server.list_tools()
    return [t.name for t in tools if isinstance(ui := (t.meta or {}).get("ui"), dict) and ui.get("resourceUri") == uri]


async def step_status(
    arguments: dict[str, Any],
    ctx: Context,
    tool: Annotated[str, Field(max_length=200)] = "",
    view: Annotated[str, Field(max_length=100)] = "",
) -> StepCard:
    """How the URL-mode step of your call `tool(arguments)` stands (for its MCP Apps view). A host
    may not say which tool was called (``hostContext.toolInfo`` is optional): then every tool that
    points at `view` is tried."""
    principal = Principal.current()
    if not principal.subject or principal.issuer != settings.MCPSITE["ISSUER"]:
        raise ToolError(NOT_YOURS)
    tenant = tenant_of(ctx)
    for name in [tool] if tool else await _tools_of_view(ctx, view):
        try:
            digest = arguments_digest(ctx.mcp_server, name, arguments)
        except ValidationError:
            continue  # not a call of this tool
        if digest is None:
            raise ToolError(f"there is no tool {name!r} here")
        row = await database_sync_to_async(_find)(tenant_id=tenant.id, principal=principal, tool=name, digest=digest)
        if row is not None:
            return card_of(row, tenant.name)
    return StepCard(status="none")


_HERE = Path(__file__).resolve().parent / "ui"

PAYMENT_VIEW = View(
    "payment",
    "Payment",
    _HERE,
    app_tools=(step_status,),
    description="A payment's amount, what it is for, its checkout link and its live status",
    files="step",
)
APPROVAL_VIEW = View(
    "approval",
    "Staff approval",
    _HERE,
    app_tools=(step_status,),
    description="Who must decide, the status, and the decision with its note",
    files="step",
)
