from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import RegexValidator
from django.db import models
from django.db.models import Exists, OuterRef, Q
from django.utils import timezone

from mcpsite.actors import ActedBy
from mcpsite.tenancy import tenant_mcp_path, tenant_resource_url, tools_of, toolsets_known, with_their_views_tools
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


class Role(models.Model):
    """What a member of a tenant may call: the tools it names and every tool of the toolsets it
    names. A member holding no role (no `MemberRole` row) may call every tool the tenant serves.

    A tool outside a member's role is not listed to them and a call of it is answered as an unknown
    tool is (`mcpsite.roles`), so a member cannot probe for what they were not given.
    """

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="roles")
    name = models.CharField(max_length=100)
    tools = models.JSONField(
        default=list, blank=True, help_text="Names of tools the role may call (of the tenant's toolsets)."
    )
    toolsets = models.JSONField(
        default=list, blank=True, help_text="Names of the tenant's toolsets whose every tool the role may call."
    )

    class Meta:
        ordering = ["tenant", "name"]
        constraints = [models.UniqueConstraint(fields=["tenant", "name"], name="one_role_name_per_tenant")]

    def __str__(self) -> str:
        return f"{self.tenant.slug}: {self.name}"

    def clean(self) -> None:
        """Names only what the tenant serves: its toolsets, and tools of its toolsets."""
        errors: dict[str, str] = {}
        for field in ("tools", "toolsets"):
            value = getattr(self, field)
            if not isinstance(value, list) or not all(isinstance(name, str) for name in value):
                errors[field] = "A list of names."
        if not errors and self.tenant_id is not None:
            served = [name for name in self.tenant.toolsets if name in toolsets_known()]
            unknown = sorted(set(self.toolsets) - set(served))
            if unknown:
                errors["toolsets"] = f"Not served by {self.tenant.slug}: {', '.join(unknown)}."
            unknown = sorted(set(self.tools) - tools_of(served))
            if unknown:
                errors["tools"] = f"No toolset of {self.tenant.slug} has: {', '.join(unknown)}."
        if errors:
            raise ValidationError(errors)
        self.tools = list(dict.fromkeys(self.tools))
        self.toolsets = list(dict.fromkeys(self.toolsets))

    def allowed_tools(self) -> frozenset[str]:
        """Every tool name the role may call (a tool its toolset no longer has is simply not served),
        with the app-only tools of their MCP Apps views."""
        return with_their_views_tools(frozenset(self.tools) | tools_of(self.toolsets))


class MemberRoleQuerySet(models.QuerySet["MemberRole"]):
    def held_by(self, user_id: int) -> MemberRoleQuerySet:
        return self.filter(user_id=user_id).select_related("role")

    def of_former_members(self) -> MemberRoleQuerySet:
        """Rows whose user is no longer a member of the row's tenant (their role went with them)."""
        membership = Tenant.members.through.objects.filter(tenant_id=OuterRef("tenant_id"), user_id=OuterRef("user_id"))
        return self.exclude(Exists(membership))


class MemberRole(models.Model):
    """The role a member holds at a tenant; without a row, a member may call every tool.

    The role must be the tenant's and the user its member: checked by `clean` and the services
    (`mcpsite.services.member_role_set`); a removed member's row goes with the membership
    (`mcpsite.signals.membership_changed`). A role held by anyone cannot be deleted (RESTRICT):
    its members would silently regain every tool.
    """

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="member_roles")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="tenant_roles")
    role = models.ForeignKey(Role, on_delete=models.RESTRICT, related_name="holders")

    objects = MemberRoleQuerySet.as_manager()

    class Meta:
        ordering = ["tenant", "user"]
        constraints = [models.UniqueConstraint(fields=["tenant", "user"], name="one_role_per_member")]

    def __str__(self) -> str:
        return f"{self.user} at {self.tenant}: {self.role.name}"

    def clean(self) -> None:
        errors: dict[str, str] = {}
        if self.tenant_id is not None and self.role_id is not None and self.role.tenant_id != self.tenant_id:
            errors["role"] = f"{self.role.name!r} is not a role of {self.tenant.slug}."
        if (
            self.tenant_id is not None
            and self.user_id is not None
            and not self.tenant.members.filter(pk=self.user_id).exists()
        ):
            errors["user"] = f"{self.user} is not a member of {self.tenant.slug}."
        if errors:
            raise ValidationError(errors)


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
