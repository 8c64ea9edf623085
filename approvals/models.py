"""Persistent URL-mode elicitations: every payment, approval and consent a tool waits for is a row.

The row id is the elicitation id on the wire (2025-11-25) and the only thing a sealed
requestState carries (2026-07-28); the database is the truth about how it ended.
"""

from __future__ import annotations

import secrets
from datetime import datetime
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone

from approvals.exceptions import ApprovalsError
from approvals.outcomes import Expiry
from mcpsite.actors import ActedBy
from mcpsite.models import Tenant
from tools_app.principal import Principal

if TYPE_CHECKING:
    from django.contrib.auth.base_user import AbstractBaseUser
    from django.contrib.auth.models import AnonymousUser


def new_elicitation_id() -> str:
    """Unguessable: the id is the capability in the sandbox checkout URL (a provider's page knows
    none of our users); the status and consent pages also need the row's own user signed in."""
    return f"el_{secrets.token_urlsafe(18)}"


class ElicitationNotPending(ApprovalsError):
    """The row already ended; nothing may complete, decline, cancel or expire it again."""

    def __init__(self, *, elicitation: Elicitation) -> None:
        super().__init__(f"elicitation {elicitation.pk} is {elicitation.status}, not pending")
        self.elicitation = elicitation


class ElicitationQuerySet(models.QuerySet["Elicitation"]):
    def pending(self) -> ElicitationQuerySet:
        return self.filter(status=Elicitation.Status.PENDING)

    def live(self) -> ElicitationQuerySet:
        """Rows a repeated call reuses: still pending, or completed (paid once is paid)."""
        return self.filter(status__in=Elicitation.LIVE_STATUSES)

    def for_call(
        self, *, tenant_id: int, principal: Principal, tool: str, args_digest: str, reference: str
    ) -> ElicitationQuerySet:
        client_id, issuer, subject = principal
        return self.filter(
            tenant_id=tenant_id,
            client_id=client_id,
            issuer=issuer,
            subject=subject,
            tool=tool,
            args_digest=args_digest,
            reference=reference,
        )

    def for_charge(self, *, tenant_id: int, principal: Principal, reference: str) -> ElicitationQuerySet:
        """One user's payments of one reference at one tenant, through whichever OAuth client: a
        person with two clients (an assistant and a task runner) pays for a booking once. The
        client is not part of it; the user (subject at issuer) is, so another user never sees it."""
        _, issuer, subject = principal
        return self.filter(
            tenant_id=tenant_id, issuer=issuer, subject=subject, reference=reference, kind=Elicitation.Kind.PAYMENT
        )

    def open_for(self, *, tenant_id: int, principal: Principal, now: datetime) -> ElicitationQuerySet:
        """One person's unfinished steps at one tenant, through whichever of their OAuth clients:
        pending and not yet past expiry (a stale row is the beat's to expire; it must not hold the
        person's cap meanwhile). The client is left out, so a fresh client registration is not a
        fresh cap; each row still belongs to the full principal that opened it."""
        _, issuer, subject = principal
        return self.pending().filter(tenant_id=tenant_id, issuer=issuer, subject=subject, expires_at__gt=now)

    def stale(self, now: datetime | None = None) -> ElicitationQuerySet:
        """Pending rows past their expiry (what the beat task expires)."""
        return self.pending().filter(expires_at__lte=now or timezone.now())

    def expire(self, *, now: datetime) -> int:
        """End these rows as expired in one UPDATE; only rows still pending are touched, so a row
        completed meanwhile (a webhook won the race) stays completed. The bulk twin of `resolve`."""
        return self.pending().update(status=Elicitation.Status.EXPIRED, outcome=Expiry().to_json(), completed_at=now)

    def unpublished(self, older_than: datetime) -> ElicitationQuerySet:
        """Ended rows whose "resolved" event never left a process (crash or broker outage)."""
        return self.exclude(status=Elicitation.Status.PENDING).filter(
            published_at__isnull=True, completed_at__lte=older_than
        )


class Elicitation(models.Model):
    class Kind(models.TextChoices):
        PAYMENT = "payment", "payment"
        APPROVAL = "approval", "staff approval"
        CONSENT = "consent", "consent"

    class Status(models.TextChoices):
        PENDING = "pending", "pending"
        COMPLETED = "completed", "completed"
        DECLINED = "declined", "declined"
        CANCELLED = "cancelled", "cancelled"
        EXPIRED = "expired", "expired"

    LIVE_STATUSES = (Status.PENDING, Status.COMPLETED)

    id = models.CharField(primary_key=True, max_length=40, default=new_elicitation_id, editable=False)
    # Money and audit records are kept: a tenant that has any is disabled, not deleted.
    tenant = models.ForeignKey(Tenant, on_delete=models.PROTECT, related_name="elicitations")
    # The principal (client id, issuer, subject) the call ran as; empty strings on a public tenant.
    client_id = models.CharField(max_length=255, blank=True)
    issuer = models.CharField(max_length=255, blank=True)
    subject = models.CharField(max_length=255, blank=True)
    tool = models.CharField(max_length=200)
    args_digest = models.CharField("arguments digest", max_length=64)
    reference = models.CharField(max_length=200, help_text="The tool's own name for this step, e.g. deposit-42.")
    kind = models.CharField(max_length=16, choices=Kind.choices)
    message = models.TextField()
    url = models.URLField(max_length=500)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING, db_index=True)
    created_at = models.DateTimeField(default=timezone.now)
    expires_at = models.DateTimeField(db_index=True)
    completed_at = models.DateTimeField(null=True, blank=True)
    outcome = models.JSONField(default=dict, blank=True)
    # The sum an approval is about (a refund's amount), so staff read it as a field, not in prose.
    # A payment's charge is on its Payment row.
    amount = models.DecimalField(max_digits=12, decimal_places=2, null=True, blank=True)
    currency = models.CharField(max_length=3, blank=True)
    completed_by_event = models.ForeignKey(
        "WebhookDelivery", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    completed_by_user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # When the "resolved" event left for the channel layer; null means a retry is owed.
    published_at = models.DateTimeField(null=True, blank=True)
    # A caller without a token (a public tenant): its address bucket, what its cap counts.
    client_address = models.CharField(max_length=64, blank=True)

    objects = ElicitationQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at"]
        indexes = [
            # The admin list pages newest first (`-created_at, -pk`): without it every page view sorts
            # the whole table (~90 ms at 100,000 rows, bench/run part 5); with it, a backward index scan.
            models.Index(fields=["created_at", "id"], name="elicitation_created_at_id"),
            # `for_charge(...).live()`: a call through another client finds the user's payment.
            models.Index(
                fields=["tenant", "subject", "reference"],
                condition=Q(kind="payment", status__in=["pending", "completed"]),
                name="live_payment_per_user",
            ),
        ]
        constraints = [
            # A repeated call (same principal, tool, arguments, reference) reuses its row.
            models.UniqueConstraint(
                fields=["tenant", "client_id", "issuer", "subject", "tool", "args_digest", "reference"],
                condition=Q(status__in=["pending", "completed"]),
                name="one_live_elicitation_per_call",
            ),
            # Money is asked once per user and reference, whichever of the user's clients calls.
            # Pending only: a completed row is found before a new one is opened (under the
            # tenant's lock, `services.elicitation_open`), and rows from before this rule may
            # already hold two completed charges, which no constraint may pretend away.
            models.UniqueConstraint(
                fields=["tenant", "issuer", "subject", "reference"],
                condition=Q(kind="payment", status="pending"),
                name="one_pending_payment_per_user",
            ),
            models.CheckConstraint(
                condition=Q(status="pending", completed_at__isnull=True)
                | (~Q(status="pending") & Q(completed_at__isnull=False)),
                name="completed_at_iff_ended",
            ),
            # Money is confirmed by a verified provider event, or by a named staff member (audited).
            models.CheckConstraint(
                condition=~Q(kind="payment", status="completed")
                | Q(completed_by_event__isnull=False)
                | Q(completed_by_user__isnull=False),
                name="payment_completed_by_webhook_or_staff",
            ),
            models.CheckConstraint(condition=Q(expires_at__gt=models.F("created_at")), name="expires_after_created"),
        ]

    def __str__(self) -> str:
        return f"{self.kind} {self.pk} ({self.status})"

    @property
    def principal(self) -> Principal:
        return Principal(self.client_id, self.issuer, self.subject)

    @property
    def is_pending(self) -> bool:
        return self.status == self.Status.PENDING

    def belongs_to(self, user: AbstractBaseUser | AnonymousUser) -> bool:
        """Whether `user`, signed in on our pages, is the principal this row was opened for.

        A browser has a Django session, not an OAuth client, so the principal is the user whose pk
        is the row's subject at our own issuer (how `mcpsite.auth` names token users). A row with
        no principal (a public tenant's) belongs to nobody: anyone could hold its id.
        """
        return (
            user.is_authenticated
            and bool(self.subject)
            and self.issuer == settings.MCPSITE["ISSUER"]
            and self.subject == str(user.pk)
        )

    def resolve(
        self,
        *,
        status: Elicitation.Status,
        outcome: dict[str, Any] | None = None,
        event: WebhookDelivery | None = None,
        user: AbstractBaseUser | None = None,
        now: datetime | None = None,
    ) -> None:
        """End this row (in memory; the caller saves it inside its transaction)."""
        if not self.is_pending:
            raise ElicitationNotPending(elicitation=self)
        if status == self.Status.PENDING:
            raise ValueError("resolve() ends a row; pending is not an end")
        self.status = status
        self.outcome = outcome or {}
        self.completed_at = now or timezone.now()
        self.completed_by_event = event
        # Whichever AUTH_USER_MODEL is configured; django-stubs types the key as the default `User`.
        self.completed_by_user = user  # type: ignore[assignment]


class Payment(models.Model):
    """What a payment elicitation charges, and where (provider and its checkout reference)."""

    elicitation = models.OneToOneField(Elicitation, primary_key=True, on_delete=models.CASCADE, related_name="payment")
    amount = models.DecimalField(max_digits=12, decimal_places=2)
    currency = models.CharField(max_length=3)
    description = models.CharField(max_length=500, blank=True)
    provider = models.CharField(max_length=32)
    provider_reference = models.CharField(max_length=255, blank=True, help_text="The provider's checkout id.")

    class Meta:
        constraints = [
            models.CheckConstraint(condition=Q(amount__gt=0), name="payment_amount_positive"),
            models.CheckConstraint(condition=Q(currency__regex=r"^[A-Z]{3}$"), name="payment_currency_iso"),
        ]

    def __str__(self) -> str:
        return f"{self.amount} {self.currency} ({self.provider})"


class WebhookDelivery(models.Model):
    """One verified provider event; the unique event id is how a duplicate delivery is recognised."""

    class Outcome(models.TextChoices):
        COMPLETED = "completed", "completed the elicitation"
        IGNORED = "ignored", "event type not acted on"
        UNKNOWN_ELICITATION = "unknown_elicitation", "no such elicitation"
        NOT_PENDING = "not_pending", "elicitation had already ended"
        MISMATCH = "mismatch", "amount or currency differs from the payment"

    provider = models.CharField(max_length=32)
    event_id = models.CharField(max_length=255)
    event_type = models.CharField(max_length=100)
    received_at = models.DateTimeField(default=timezone.now)
    elicitation = models.ForeignKey(
        Elicitation, null=True, blank=True, on_delete=models.SET_NULL, related_name="deliveries"
    )
    outcome = models.CharField(max_length=32, choices=Outcome.choices)
    flagged = models.BooleanField(default=False, help_text="Money arrived for nothing: staff must look at it.")
    payload = models.JSONField(default=dict)

    class Meta:
        ordering = ["-received_at"]
        verbose_name_plural = "webhook deliveries"
        constraints = [
            models.UniqueConstraint(fields=["provider", "event_id"], name="one_delivery_per_event"),
        ]

    def __str__(self) -> str:
        return f"{self.provider} {self.event_id} ({self.outcome})"


class ElicitationEvent(ActedBy):
    """The audit trail of one elicitation: how it ended, and every staff action on it, each with
    who acted and which way (`mcpsite.actors.Actor`)."""

    elicitation = models.ForeignKey(Elicitation, on_delete=models.CASCADE, related_name="events")
    at = models.DateTimeField(default=timezone.now)
    status = models.CharField(max_length=16, choices=Elicitation.Status.choices)
    note = models.TextField(blank=True)

    class Meta:
        ordering = ["at"]

    def __str__(self) -> str:
        return f"{self.elicitation_id} {self.status} via {self.via}"
