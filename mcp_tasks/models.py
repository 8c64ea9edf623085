"""Durable tasks (the MCP Tasks extension): every long tool call a client polls is a row.

The row is the truth: whichever process serves ``tasks/get`` reads it, whichever worker runs the
tool writes it, and a worker that dies leaves a lease running out for the beat to find.
"""

from __future__ import annotations

import secrets
from datetime import UTC, datetime
from typing import Any

from django.db import models
from django.db.models import Q
from django.utils import timezone

from mcpsite.models import Tenant
from tools_app.principal import Principal


def new_task_id() -> str:
    """Unguessable (256 random bits): on a public tenant, where callers have no principal, the id
    is the capability that binds a task to its creator; it is shown to nobody else (no listing)."""
    return f"tsk_{secrets.token_urlsafe(32)}"


class TaskQuerySet(models.QuerySet["Task"]):
    def owned_by(self, *, tenant_id: int, principal: Principal) -> TaskQuerySet:
        """One principal's tasks at one tenant: every ``tasks/*`` reads through here."""
        client_id, issuer, subject = principal
        return self.filter(tenant_id=tenant_id, client_id=client_id, issuer=issuer, subject=subject)

    def of_person(self, *, tenant_id: int, principal: Principal) -> TaskQuerySet:
        """One person's tasks at one tenant, through whichever of their OAuth clients: what the
        cap counts (a fresh client registration is not a fresh cap). Never for reading a task:
        those go through `owned_by`."""
        _, issuer, subject = principal
        return self.filter(tenant_id=tenant_id, issuer=issuer, subject=subject)

    def live(self) -> TaskQuerySet:
        return self.filter(status__in=Task.LIVE_STATUSES)

    def expired(self, now: datetime) -> TaskQuerySet:
        return self.filter(expires_at__lte=now)

    def lost(self, now: datetime) -> TaskQuerySet:
        """Working tasks whose lease ran out: the worker died, or the run was never picked up."""
        return self.filter(status=Task.Status.WORKING, claimed_until__lte=now)


class Task(models.Model):
    class Status(models.TextChoices):
        WORKING = "working", "working"
        INPUT_REQUIRED = "input_required", "input required"
        COMPLETED = "completed", "completed"
        FAILED = "failed", "failed"
        CANCELLED = "cancelled", "cancelled"

    LIVE_STATUSES = (Status.WORKING, Status.INPUT_REQUIRED)

    id = models.CharField(primary_key=True, max_length=64, default=new_task_id, editable=False)
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="tasks")
    # The principal (client id, issuer, subject) the call ran as; empty strings on a public tenant.
    client_id = models.CharField(max_length=255, blank=True)
    issuer = models.CharField(max_length=255, blank=True)
    subject = models.CharField(max_length=255, blank=True)
    # Who an anonymous task counts against for the cap (a public tenant has no principal): the
    # creating request's client address; empty for a principal's task.
    client_address = models.CharField(max_length=64, blank=True)
    tool = models.CharField(max_length=200)
    arguments = models.JSONField(default=dict, blank=True, help_text="As the tool's own model validated them.")
    # What the client declared on the creating call: the tool sees the same capabilities in the task.
    client_capabilities = models.JSONField(default=dict, blank=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.WORKING, db_index=True)
    result = models.JSONField(null=True, blank=True)
    error = models.JSONField(null=True, blank=True)
    # The questions still unanswered (wire shape, keyed as asked), the answers gathered for the
    # next run, and the tool's own state between runs (plaintext: it never leaves the server).
    input_requests = models.JSONField(default=dict, blank=True)
    input_responses = models.JSONField(default=dict, blank=True)
    request_state = models.TextField(blank=True)
    # The URL-mode steps it is parked on (input_required), taken from its state when it parks: their
    # ending (a webhook, a staff decision, expiry) runs it again (`tasks_resume`).
    waits_on = models.ManyToManyField("approvals.Elicitation", related_name="waiting_tasks", blank=True)
    ttl_ms = models.PositiveIntegerField()
    poll_interval_ms = models.PositiveIntegerField()
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)
    expires_at = models.DateTimeField(db_index=True)
    # Runs started (a retry after a lost worker is another), and how many the tool allows.
    attempts = models.PositiveSmallIntegerField(default=0)
    max_attempts = models.PositiveSmallIntegerField(default=1)
    # While working: when the current run's lease ends unless its worker renews it.
    claimed_until = models.DateTimeField(null=True, blank=True, db_index=True)
    worker = models.CharField(max_length=200, blank=True, help_text="Host and process of the current run.")

    objects = TaskQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at"]
        permissions = [("cancel_task", "Can cancel a task")]
        indexes = [
            models.Index(fields=["tenant", "client_id", "issuer", "subject", "status"], name="task_owner_status"),
            models.Index(fields=["created_at", "id"], name="task_created_at_id"),
        ]
        constraints = [
            models.CheckConstraint(
                condition=~Q(status="completed") | Q(result__isnull=False), name="completed_task_has_result"
            ),
            models.CheckConstraint(
                condition=~Q(status="failed") | Q(error__isnull=False), name="failed_task_has_error"
            ),
            models.CheckConstraint(condition=Q(max_attempts__gte=1), name="task_runs_at_least_once"),
        ]

    def __str__(self) -> str:
        return f"task {self.tool} {self.pk[:12]}… ({self.status})"

    @property
    def principal(self) -> Principal:
        return Principal(self.client_id, self.issuer, self.subject)

    @property
    def is_terminal(self) -> bool:
        return self.status not in self.LIVE_STATUSES

    def wire(self, *, detailed: bool) -> dict[str, Any]:
        """The task as the extension's wire shows it: a `CreateTaskResult` (``detailed=False``)
        or the `DetailedTask` of ``tasks/get`` (with inputRequests, result or error by status)."""
        shape: dict[str, Any] = {
            "taskId": self.pk,
            "status": self.status,
            "createdAt": _iso(self.created_at),
            "lastUpdatedAt": _iso(self.updated_at),
            "ttlMs": self.ttl_ms,
            "pollIntervalMs": self.poll_interval_ms,
        }
        if not detailed:
            return shape
        if self.status == self.Status.INPUT_REQUIRED:
            shape["inputRequests"] = dict(self.input_requests)
        elif self.status == self.Status.COMPLETED:
            # The inlined result is a 2026-07-28 `CallToolResult`, whose schema requires
            # ``resultType`` (a tools/call answer carries it too); clients validate it and settle a
            # task whose result lacks it as failed. Added here, so rows stored without it answer right.
            shape["result"] = {**(self.result or {}), "resultType": "complete"}
        elif self.status == self.Status.FAILED:
            shape["error"] = self.error
        return shape


def _iso(at: datetime) -> str:
    return at.astimezone(UTC).isoformat().replace("+00:00", "Z")
