from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.core.validators import RegexValidator
from django.db import models
from django.db.models import Q
from django.utils import timezone

from mcpsite.actors import ActedBy
from mcpsite.tenancy import tenant_mcp_path, tenant_resource_url
from tools_app.tenant import tenant_audience


class TenantQuerySet(models.QuerySet["Tenant"]):
    def served(self) -> TenantQuerySet:
        return self.filter(enabled=True)

    def of_member(self, user_id: int) -> TenantQuerySet:
        return self.filter(members__pk=user_id)


class Tenant(models.Model):
    """A customer: its own MCP endpoint at ``/t/<slug>/mcp`` with the toolsets it enabled."""

    slug = models.SlugField(
        max_length=63,
        unique=True,
        validators=[RegexValidator(r"^[a-z0-9][a-z0-9-]*$", "Lowercase letters, digits and hyphens.")],
    )
    name = models.CharField(max_length=200)
    enabled = models.BooleanField(
        default=True, help_text="Disabled tenants are not served: they answer as an unknown tenant does."
    )
    public = models.BooleanField(
        default=False,
        help_text="No sign-in required (fixtures only); requestState is then not bound to a principal.",
    )
    toolsets = models.JSONField(default=list, blank=True, help_text="Names of the toolsets this tenant serves.")
    call_quota = models.PositiveIntegerField(
        null=True,
        blank=True,
        help_text="MCP requests the whole tenant may make per quota window (MCPSITE_CALL_QUOTA_WINDOW_SECONDS); "
        "empty: the site's default (MCPSITE_CALL_QUOTA_PER_TENANT); 0: no limit.",
    )
    call_quota_per_person = models.PositiveIntegerField(
        null=True,
        blank=True,
        help_text="MCP requests one person (a user across their OAuth clients; an anonymous caller by address) "
        "may make here per quota window; empty: the site's default (MCPSITE_CALL_QUOTA_PER_PERSON); 0: no limit.",
    )
    members = models.ManyToManyField(settings.AUTH_USER_MODEL, blank=True, related_name="tenants")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = TenantQuerySet.as_manager()

    class Meta:
        ordering = ["slug"]

    def __str__(self) -> str:
        return self.slug

    @property
    def mcp_path(self) -> str:
        return tenant_mcp_path(self.slug)

    def resource_url(self, site_root: str | None = None) -> str:
        """The RFC 8707 resource (and RFC 9728 resource identifier) of this tenant's endpoint."""
        return tenant_resource_url(self.slug, site_root)

    @property
    def audience(self) -> str:
        """The tenant's MCP server name, which is also its requestState audience."""
        return tenant_audience(self.slug)


class RequestStateKey(models.Model):
    """One AES-256-GCM key of the requestState key ring.

    Rotation: add (verifying) -> promote (minting; the old minting key becomes verifying) ->
    retire one TTL later. Material is generated server-side and stored encrypted under the
    key-encryption key; nothing ever displays it.
    """

    class Phase(models.TextChoices):
        VERIFYING = "verifying", "verifying"
        MINTING = "minting", "minting"
        RETIRED = "retired", "retired"

    kid = models.CharField("key id", max_length=16, unique=True, editable=False)
    phase = models.CharField(max_length=16, choices=Phase.choices, default=Phase.VERIFYING)
    material = models.BinaryField(editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    minting_since = models.DateTimeField(null=True, blank=True, editable=False)
    minting_until = models.DateTimeField(null=True, blank=True, editable=False)
    retired_at = models.DateTimeField(null=True, blank=True, editable=False)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(fields=["phase"], condition=Q(phase="minting"), name="one_minting_key"),
        ]
        permissions = [("rotate_requeststatekey", "Can rotate the requestState key ring")]

    def __str__(self) -> str:
        return f"{self.kid} ({self.phase})"


class ConsumedRequestState(models.Model):
    """A sealed requestState that has been answered once and must not be answered again.

    Rows outlive the state they name by nothing: `expires_at` is when the state itself expires,
    after which the codec refuses it anyway and `request_states_purge` deletes the row.
    """

    digest = models.CharField(max_length=64, primary_key=True)
    expires_at = models.DateTimeField(db_index=True)

    def __str__(self) -> str:
        return self.digest


class KeyRingEvent(ActedBy):
    """The audit trail of the key ring: who did what to which key, and when."""

    class Action(models.TextChoices):
        ADDED = "added", "added"
        PROMOTED = "promoted", "promoted to minting"
        RETIRED = "retired", "retired"
        RETIRED_NOW = "retired_now", "retired now (override)"

    at = models.DateTimeField(auto_now_add=True, db_index=True)
    action = models.CharField(max_length=16, choices=Action.choices)
    kid = models.CharField("key id", max_length=16)
    note = models.TextField(blank=True)

    class Meta:
        ordering = ["-at"]

    def __str__(self) -> str:
        return f"{self.at:%Y-%m-%d %H:%M:%S} {self.action} {self.kid}"


class ProcessHeartbeatQuerySet(models.QuerySet["ProcessHeartbeat"]):
    def live(self, *, within: float) -> ProcessHeartbeatQuerySet:
        return self.filter(seen_at__gte=timezone.now() - timedelta(seconds=within))


class ProcessHeartbeat(models.Model):
    """A serving process, and the version of the key ring it has loaded (refreshed every poll)."""

    process_id = models.CharField(max_length=120, primary_key=True)
    hostname = models.CharField(max_length=255)
    pid = models.PositiveIntegerField()
    ring_version = models.CharField(max_length=32)
    ring_kids = models.JSONField(default=list)
    started_at = models.DateTimeField()
    seen_at = models.DateTimeField(db_index=True)

    objects = ProcessHeartbeatQuerySet.as_manager()

    class Meta:
        ordering = ["hostname", "pid"]

    def __str__(self) -> str:
        return self.process_id


class ClientApplicationType(models.Model):
    """What kind of client a dynamically registered OAuth application is (OpenID Connect
    Registration's ``application_type``; MCP SEP-837), and whether it said so or it was inferred
    from its redirect URIs (`mcpsite.oauth.application_type_infer`): many clients predate SEP-837.
    DOT's application has no such field."""

    class Kind(models.TextChoices):
        NATIVE = "native", "native"
        WEB = "web", "web"

    application = models.OneToOneField(
        "oauth2_provider.Application",
        primary_key=True,
        on_delete=models.CASCADE,
        related_name="application_type",
    )
    application_type = models.CharField(max_length=6, choices=Kind.choices)
    inferred = models.BooleanField(help_text="Inferred from the redirect URIs: the client did not say.")

    def __str__(self) -> str:
        return f"{self.application_type} ({'inferred' if self.inferred else 'stated'})"
