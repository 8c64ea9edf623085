"""A machine client of the operator API: a staff-created confidential OAuth application bound to
one operator (its `user`), allowed the client_credentials grant with the scopes listed here only."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from oauth2_provider.models import Application

from mcpsite.actors import ActedBy


class OperatorClientQuerySet(models.QuerySet["OperatorClient"]):
    def acting(self) -> OperatorClientQuerySet:
        """Clients whose operator may still act: an active staff user."""
        return self.filter(application__user__is_active=True, application__user__is_staff=True)


class OperatorClient(models.Model):
    application = models.OneToOneField(Application, primary_key=True, on_delete=models.CASCADE, related_name="operator")
    scopes = models.JSONField(default=list, help_text="The operator scopes its tokens may carry.")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    objects = OperatorClientQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.application.name} ({' '.join(self.scopes)})"


class OperatorClientEvent(ActedBy):
    """The audit trail of operator machine clients: who changed which client's user, secret, grant
    type or scopes, and when (never the secret itself). Kept when the client is deleted."""

    at = models.DateTimeField(auto_now_add=True, db_index=True)
    application = models.ForeignKey(
        Application, null=True, blank=True, on_delete=models.SET_NULL, related_name="operator_events"
    )
    client_id = models.CharField("client id", max_length=100)
    changed = models.JSONField(default=list, help_text="The fields that changed.")
    note = models.TextField(blank=True, help_text="From what to what (a secret only as 'set').")

    class Meta:
        ordering = ["-at"]

    def __str__(self) -> str:
        return f"{self.at:%Y-%m-%d %H:%M:%S} {self.client_id}: {', '.join(self.changed)}"
