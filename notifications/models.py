"""Endpoints operators configure, one delivery row per event and endpoint, one attempt row per try.

The delivery row is the record of what is owed: it is written in the transaction of the change
it reports (so a rolled-back change owes nothing), and senders pick due rows from the table, so
a crash, a lost Celery message or a dead receiver delays an event but never loses it.
"""

from __future__ import annotations

import base64
import secrets
from collections import Counter
from collections.abc import Iterable
from datetime import datetime, timedelta

from django.db import models
from django.db.models import Q
from django.utils import timezone

from mcpsite.models import Tenant


class EventType(models.TextChoices):
    APPROVAL_PENDING = "approval.pending", "approval.pending: a staff approval waits for a decision"
    PAYMENT_FLAGGED = "payment.flagged", "payment.flagged: money arrived for nothing"
    KEYRING_CHANGED = "keyring.changed", "keyring.changed: a requestState key was added, promoted or retired"


# Sent by the admin's "send test event" to an endpoint whatever it subscribes to.
TEST_EVENT = "notification.test"


def new_secret() -> str:
    """A Standard Webhooks secret: ``whsec_`` and 32 random bytes in base64 (the form receivers' libraries take)."""
    return "whsec_" + base64.b64encode(secrets.token_bytes(32)).decode()


def new_message_id() -> str:
    """The ``webhook-id``: unguessable, and the same on every retry, so receivers deduplicate."""
    return f"msg_{secrets.token_urlsafe(18)}"


class EndpointQuerySet(models.QuerySet["Endpoint"]):
    def subscribed(self, *, event_type: str, tenant_id: int | None) -> list[Endpoint]:
        """The enabled endpoints an event of `tenant_id` (None: site-wide) goes to.

        A tenant's events go to its own endpoints and to the site-wide (operator) ones; a
        site-wide event goes to the site-wide ones, and to any tenant's that subscribe to
        ``keyring.changed`` (the one site-wide event a tenant may ask for). Event types are
        filtered here, not in SQL: the list is a JSON array, and SQLite cannot search one.
        """
        scope = Q(tenant__isnull=True)
        if tenant_id is not None:
            scope |= Q(tenant_id=tenant_id)
        elif event_type == EventType.KEYRING_CHANGED:
            scope |= Q(tenant__isnull=False)
        return [e for e in self.filter(scope, enabled=True) if event_type in e.event_types]


class Endpoint(models.Model):
    """A URL that receives signed events; a tenant's (its operators') or, with no tenant, the site's."""

    tenant = models.ForeignKey(
        Tenant,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="notification_endpoints",
        help_text="Leave empty for a site-wide (operator) endpoint, which receives every tenant's events.",
    )
    url = models.URLField("URL", max_length=500, help_text="https only; private and loopback addresses are refused.")
    description = models.CharField(max_length=200, blank=True)
    # Generated server-side and shown once (on creation and on rotation); never displayed again.
    secret = models.CharField(max_length=100, default=new_secret, editable=False)
    event_types = models.JSONField(default=list, help_text="The event types this endpoint receives.")
    enabled = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)
    secret_rotated_at = models.DateTimeField(null=True, blank=True, editable=False)

    objects = EndpointQuerySet.as_manager()

    class Meta:
        ordering = ["tenant__slug", "url"]

    def __str__(self) -> str:
        return f"{self.tenant.slug if self.tenant is not None else 'site-wide'}: {self.url}"

    def rotate_secret(self) -> str:
        """A new secret (the caller saves); deliveries already due are signed with it."""
        self.secret = new_secret()
        self.secret_rotated_at = timezone.now()
        return self.secret


class DeliveryQuerySet(models.QuerySet["Delivery"]):
    def due(self, now: datetime) -> DeliveryQuerySet:
        """Pending, its next attempt due, and no sender holding it (or its lease ran out: a sender died)."""
        return self.filter(status=Delivery.Status.PENDING, next_attempt_at__lte=now).filter(
            Q(locked_until__isnull=True) | Q(locked_until__lt=now)
        )

    def in_flight(self, now: datetime) -> DeliveryQuerySet:
        return self.filter(status=Delivery.Status.PENDING, locked_until__gte=now)

    def in_flight_per_endpoint(self, endpoint_ids: Iterable[int], now: datetime) -> Counter[int]:
        rows = self.in_flight(now).filter(endpoint_id__in=list(endpoint_ids)).values_list("endpoint_id", flat=True)
        return Counter(rows)


class Delivery(models.Model):
    """One event for one endpoint: its Standard Webhooks message, and how far its delivery got."""

    class Status(models.TextChoices):
        PENDING = "pending", "pending"
        DELIVERED = "delivered", "delivered"
        FAILED = "failed", "failed"

    id = models.CharField("message id", primary_key=True, max_length=40, default=new_message_id, editable=False)
    endpoint = models.ForeignKey(Endpoint, on_delete=models.CASCADE, related_name="deliveries")
    event_type = models.CharField(max_length=64, db_index=True)
    # The Standard Webhooks payload ({"type", "timestamp", "data"}): ids and what an operator
    # needs, never a secret, token or requestState.
    payload = models.JSONField()
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING, db_index=True)
    attempts = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(default=timezone.now)
    next_attempt_at = models.DateTimeField(null=True, blank=True, default=timezone.now, db_index=True)
    # A sender's claim on the row while it posts; past it, another sender may take the row.
    locked_until = models.DateTimeField(null=True, blank=True)
    delivered_at = models.DateTimeField(null=True, blank=True)

    objects = DeliveryQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at"]
        verbose_name_plural = "deliveries"
        constraints = [
            models.CheckConstraint(
                condition=Q(status="pending", next_attempt_at__isnull=False)
                | (~Q(status="pending") & Q(next_attempt_at__isnull=True)),
                name="next_attempt_iff_pending",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.event_type} {self.pk} ({self.status})"

    def attempted(self, *, ok: bool, at: datetime, retry_in: float | None) -> None:
        """Account for one finished attempt (in memory; the caller saves): delivered on a 2xx,
        else due again in `retry_in` seconds, or failed when no attempt is left (None)."""
        self.attempts += 1
        self.locked_until = None
        if ok:
            self.status, self.delivered_at, self.next_attempt_at = self.Status.DELIVERED, at, None
        elif retry_in is None:
            self.status, self.next_attempt_at = self.Status.FAILED, None
        else:
            self.next_attempt_at = at + timedelta(seconds=retry_in)

    def retry_now(self) -> None:
        """Staff: one more attempt, now, for a failed delivery (the caller saves)."""
        if self.status != self.Status.FAILED:
            raise ValueError(f"{self.pk} is {self.status}; only a failed delivery is retried by hand")
        self.status, self.next_attempt_at, self.locked_until = self.Status.PENDING, timezone.now(), None


class Attempt(models.Model):
    """One try at posting a delivery: what the receiver answered, or why there was no answer."""

    delivery = models.ForeignKey(Delivery, on_delete=models.CASCADE, related_name="attempt_rows")
    started_at = models.DateTimeField()
    duration_seconds = models.FloatField()
    status_code = models.PositiveSmallIntegerField(null=True, blank=True)
    response_excerpt = models.CharField(max_length=300, blank=True)
    error = models.CharField(max_length=300, blank=True)

    class Meta:
        ordering = ["started_at"]

    def __str__(self) -> str:
        return f"{self.delivery_id} at {self.started_at:%H:%M:%S}: {self.status_code or self.error}"

    @property
    def ok(self) -> bool:
        return self.status_code is not None and 200 <= self.status_code < 300
