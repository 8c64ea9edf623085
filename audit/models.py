"""One row per ``tools/call``: who called which tool, with what (a digest), how it ended, how long
it took, and the request id its log lines carry. Written only by the audit writer (`audit.writer`),
deleted only by the retention clean-up (`audit.services.toolcalls_purge`)."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from mcpsite.models import Tenant


class ToolCall(models.Model):
    class Outcome(models.TextChoices):
        RESULT = "result", "result"
        TOOL_ERROR = "tool_error", "tool error"
        PROTOCOL_ERROR = "protocol_error", "protocol error"
        INPUT_REQUIRED = "input_required", "input required"
        TASK = "task", "task created"  # its run is a row of its own (``task_id``)
        REFUSED_SCOPE = "refused_scope", "refused by scope"
        REFUSED_ROLE = "refused_role", "refused by role"

    id = models.BigAutoField(primary_key=True)
    at = models.DateTimeField(help_text="When the call reached the server.")
    # No database constraint on either: an audit row outlives the tenant or user it names, and a
    # batch is never refused because one of them was deleted between the call and its writing.
    tenant = models.ForeignKey(Tenant, null=True, on_delete=models.DO_NOTHING, db_constraint=False, related_name="+")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.DO_NOTHING,
        db_constraint=False,
        related_name="+",
        help_text="The person the token acts for (none for an anonymous caller of a public tenant).",
    )
    # The principal as the SDK read it off the token (empty strings for an anonymous caller).
    client_id = models.CharField("OAuth client", max_length=255, blank=True)
    issuer = models.CharField(max_length=255, blank=True)
    subject = models.CharField(max_length=255, blank=True)
    tool = models.CharField(max_length=128, help_text="The name the caller sent (bounded).")
    arguments_digest = models.CharField(
        max_length=64, help_text="SHA-256 of the arguments' canonical JSON: never their values."
    )
    arguments = models.JSONField(
        default=dict, blank=True, help_text="Only the arguments the tool marks safe to record (audit_args)."
    )
    outcome = models.CharField(max_length=16, choices=Outcome.choices)
    error_code = models.IntegerField(null=True, blank=True, help_text="The JSON-RPC code of a protocol error.")
    duration_ms = models.FloatField()
    request_id = models.CharField(max_length=128, blank=True, help_text="The X-Request-ID its log lines carry.")
    generation = models.CharField(max_length=10, help_text="The protocol generation (2025-11-25 or 2026-07-28).")
    task_id = models.CharField(max_length=64, blank=True, help_text="Set on a task's run (outside any request).")

    class Meta:
        ordering = ["-id"]
        indexes = [
            # The export's cursor (newest first, per tenant) and the admin's filters.
            models.Index(fields=["tenant", "-id"], name="audit_tenant_newest"),
            models.Index(fields=["user", "-id"], name="audit_user_newest"),
            # The JSON Lines stream of a time range, the date hierarchy, and the retention clean-up.
            models.Index(fields=["at", "id"], name="audit_at"),
            models.Index(fields=["request_id"], name="audit_request_id"),
        ]

    def __str__(self) -> str:
        return f"{self.tool} {self.outcome} at {self.at:%Y-%m-%d %H:%M:%S}"
