"""The framework's URL-mode steps kept as `Elicitation` rows (`tools_app.urlmode.UrlStepStore`).

Handed to each tenant's server by the composer (`mcp_server.compose.serving`), so the framework
imports nothing of this app: a step
opens (or reuses) a row through `elicitation_open`, a client's decline or cancel ends it
through the services, and a wait is woken by the ``approvals.resolved`` broadcast (`completion_wait`).
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import anyio
from channels.db import database_sync_to_async

from approvals import completion_wait
from approvals.conf import approvals_settings
from approvals.models import Elicitation, ElicitationNotPending
from approvals.outcomes import cancelled_by_of, note_of, outcome_from_json, receipt_of
from approvals.services.ending import elicitation_cancel, elicitation_decline
from approvals.services.opening import PaymentTerms, TooManyPending, elicitation_open
from mcpsite.actors import CLIENT
from tools_app.principal import Principal
from tools_app.urlmode import (
    Approval,
    Cancelled,
    Completed,
    Declined,
    Expired,
    Payment,
    PendingStep,
    StepRefused,
    StepState,
    UrlStep,
)

_reload = database_sync_to_async(lambda pk: Elicitation.objects.get(pk=pk))


def state_of(row: Elicitation) -> StepState:
    """How the row stands, as the tool receives it (or the pending step the client is shown)."""
    if row.status == Elicitation.Status.COMPLETED:
        return Completed(row.pk, receipt=receipt_of(outcome_from_json(row.outcome)))
    if row.status == Elicitation.Status.DECLINED:
        return Declined(row.pk, note=note_of(outcome_from_json(row.outcome)))
    if row.status == Elicitation.Status.EXPIRED:
        return Expired(row.pk, reason="expired")
    if row.status == Elicitation.Status.CANCELLED:
        return Cancelled(row.pk, reason=cancelled_by_of(outcome_from_json(row.outcome)))
    return PendingStep(elicitation_id=row.pk, message=row.message, url=row.url, ref=row)


class ElicitationStepStore:
    async def open(
        self,
        step: UrlStep,
        *,
        tenant_id: int,
        principal: Principal,
        tool: str,
        args_digest: str,
        known_ids: list[str],
        client_address: str = "",
    ) -> StepState:
        try:
            row = await database_sync_to_async(elicitation_open)(
                tenant_id=tenant_id,
                principal=principal,
                tool=tool,
                args_digest=args_digest,
                kind=step.kind,
                reference=step.reference,
                message=step.message,
                payment=(
                    PaymentTerms(
                        amount=Decimal(step.amount),
                        currency=step.currency.upper(),
                        description=step.description,
                        provider=step.provider,
                    )
                    if isinstance(step, Payment)
                    else None
                ),
                amount=Decimal(step.amount) if isinstance(step, Approval) and step.amount is not None else None,
                currency=step.currency.upper() if isinstance(step, Approval) and step.amount is not None else "",
                expires_in=step.expires_in,
                known_ids=known_ids,
                client_address=client_address,
            )
        except TooManyPending as exc:
            raise StepRefused(str(exc)) from exc
        return state_of(row)

    async def end_by_client(self, step: PendingStep, action: str | None) -> StepState:
        row: Elicitation = step.ref
        end = elicitation_decline if action == "decline" else elicitation_cancel
        try:
            return state_of(await database_sync_to_async(end)(elicitation=row, actor=CLIENT))
        except ElicitationNotPending:
            return state_of(await _reload(row.pk))

    async def wait_for_end(self, step: PendingStep, seconds: float) -> StepState:
        async with completion_wait.watching(step.elicitation_id) as ended:
            row = await _reload(step.elicitation_id)
            if row.is_pending and seconds > 0:
                with anyio.move_on_after(seconds):
                    await ended.wait()
                row = await _reload(row.pk)
        return state_of(row)

    def notify_session_on_end(self, elicitation_id: str, session: Any) -> None:
        completion_wait.notify_session_on_end(elicitation_id, session)

    def hold_seconds(self) -> float:
        return approvals_settings()["HOLD_SECONDS"]

    def legacy_wait_seconds(self) -> float:
        return approvals_settings()["LEGACY_WAIT_SECONDS"]
