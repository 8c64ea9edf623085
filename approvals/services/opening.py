"""Opening the row for a URL-mode step: idempotent per call (per charge, for a payment), under
the person's cap."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal

from django.conf import settings
from django.db import IntegrityError, transaction
from django.urls import reverse
from django.utils import timezone

from approvals import signals
from approvals.conf import approvals_settings
from approvals.exceptions import ApprovalsError
from approvals.models import Elicitation, ElicitationEvent, Payment, new_elicitation_id
from approvals.providers import DEFAULT_PROVIDER, get_provider
from mcpsite.actors import Via
from mcpsite.models import Tenant
from mcpsite.net import address_bucket
from tools_app.principal import Principal

logger = logging.getLogger(__name__)


class TooManyPending(ApprovalsError):
    """The person already has `limit` unfinished steps at this tenant (through any of their
    OAuth clients); no new row is opened."""

    def __init__(self, *, limit: int) -> None:
        super().__init__(
            f"You have {limit} unfinished payments, approvals or consents here, the most allowed at once. "
            "Finish or cancel one, or wait for one to expire, then call again."
        )
        self.limit = limit


@dataclass(frozen=True)
class PaymentTerms:
    amount: Decimal
    currency: str
    description: str = ""
    provider: str = DEFAULT_PROVIDER


def _page_url(kind: str, elicitation_id: str, provider: str) -> str:
    if kind == Elicitation.Kind.PAYMENT:
        return get_provider(provider).checkout_url(elicitation_id=elicitation_id)
    name = "approvals:consent" if kind == Elicitation.Kind.CONSENT else "approvals:status"
    return f"{settings.SITE_ROOT}{reverse(name, args=[elicitation_id])}"


def elicitation_open(
    *,
    tenant_id: int,
    principal: Principal,
    tool: str,
    args_digest: str,
    kind: str,
    reference: str,
    message: str,
    payment: PaymentTerms | None = None,
    amount: Decimal | None = None,
    currency: str = "",
    expires_in: float | None = None,
    known_ids: Iterable[str] = (),
    client_address: str = "",
) -> Elicitation:
    """The row for this step of this call: the one the client was already shown (`known_ids`,
    from its requestState), else the live one for the same call, else a new one. A payment is
    the same step for every client of the same user (`for_charge`: tenant, user, reference), so
    a booking paid, or waiting to be paid, through one client is not charged again through another.

    Idempotent under concurrency: openings at one tenant take its lock (`_lock_openings`) and
    look again under it; without row locks (SQLite) two rounds racing to create the row meet at
    the ``one_live_elicitation_per_call`` / ``one_pending_payment_per_user`` constraints and
    both return the winner's row.
    A new row needs room under ``APPROVALS["MAX_PENDING_PER_PRINCIPAL"]``, else `TooManyPending`:
    counted per person, and for a caller without a token (a public tenant) per ``client_address``
    (an IPv6 client by its /64), kept on the row for that.
    A new row's audit trail starts with its opening (source "client": the call that asked).
    `amount`/`currency`: the sum an approval is about (a refund); a payment's is in its terms.
    """
    if (kind == Elicitation.Kind.PAYMENT) != (payment is not None):
        raise ValueError("a payment elicitation needs payment terms, and only a payment has them")
    same = (
        Elicitation.objects.for_charge(tenant_id=tenant_id, principal=principal, reference=reference)
        if kind == Elicitation.Kind.PAYMENT
        else Elicitation.objects.for_call(
            tenant_id=tenant_id, principal=principal, tool=tool, args_digest=args_digest, reference=reference
        )
    )
    known = list(known_ids)
    if known:
        row = same.filter(pk__in=known).order_by("-created_at").first()
        if row is not None:
            return row
    row = same.live().first()
    if row is not None:
        return row
    now = timezone.now()
    elicitation_id = new_elicitation_id()
    client_id, issuer, subject = principal
    client_address = address_bucket(client_address) if principal == ("", "", "") else ""
    try:
        with transaction.atomic():
            _lock_openings(tenant_id=tenant_id)
            # Another round (another client of the same user, for a payment) may have opened
            # the row, or had it paid, since the look above; under the lock nothing else opens one.
            row = same.live().first()
            if row is not None:
                return row
            _make_room(tenant_id=tenant_id, principal=principal, client_address=client_address, now=now)
            row = Elicitation.objects.create(
                id=elicitation_id,
                tenant_id=tenant_id,
                client_id=client_id,
                issuer=issuer,
                subject=subject,
                client_address=client_address,
                tool=tool,
                args_digest=args_digest,
                reference=reference,
                kind=kind,
                message=message,
                url=_page_url(kind, elicitation_id, payment.provider if payment else DEFAULT_PROVIDER),
                created_at=now,
                expires_at=now + timedelta(seconds=expires_in or approvals_settings()["EXPIRES_SECONDS"]),
                amount=amount,
                currency=currency,
            )
            ElicitationEvent.objects.create(
                elicitation=row,
                at=now,
                via=Via.CLIENT,
                status=row.status,
                note=f"opened by {tool} ({reference})",
            )
            if payment is not None:
                Payment.objects.create(
                    elicitation=row,
                    amount=payment.amount,
                    currency=payment.currency,
                    description=payment.description,
                    provider=payment.provider,
                )
            if kind == Elicitation.Kind.APPROVAL:
                signals.approval_pending.send(sender=Elicitation, elicitation=row)
    except IntegrityError:
        return same.live().get()
    logger.info("elicitation %s opened: %s %s for %s", row.pk, kind, reference, tool)
    return row


def _lock_openings(*, tenant_id: int) -> None:
    """Serialize opening rows at one tenant on the tenant row (FOR NO KEY UPDATE: it does not
    block inserts that merely reference the tenant), so concurrent calls cannot both take the
    last place under the cap, nor both open the same step. Only a new row pays for this; a
    repeat reuses its row before getting here."""
    list(Tenant.objects.select_for_update(no_key=True).filter(pk=tenant_id).values_list("pk", flat=True))


def _make_room(*, tenant_id: int, principal: Principal, client_address: str, now: datetime) -> None:
    """Refuse a new row beyond the person's cap (junk arguments must not open rows without end),
    counted across their OAuth clients (`open_for`). Called under `_lock_openings`."""
    limit = approvals_settings()["MAX_PENDING_PER_PRINCIPAL"]
    open_rows = Elicitation.objects.open_for(tenant_id=tenant_id, principal=principal, now=now)
    if principal == ("", "", ""):  # callers without a token are one principal: count each by address
        open_rows = open_rows.filter(client_address=client_address)
    if open_rows.count() >= limit:
        raise TooManyPending(limit=limit)
