"""REST shapes of the operator API (DRF serializers, the house style's exception for REST)."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from approvals.models import Elicitation, ElicitationEvent, WebhookDelivery
from audit.models import ToolCall
from mcp_tasks.models import Task
from mcpsite.keyring import rotation
from mcpsite.models import RequestStateKey, Role, Tenant


class DeliverySerializer(serializers.ModelSerializer[WebhookDelivery]):
    class Meta:
        model = WebhookDelivery
        fields = ["id", "provider", "event_id", "event_type", "received_at", "elicitation", "outcome", "flagged"]


class EventSerializer(serializers.ModelSerializer[ElicitationEvent]):
    actor = serializers.SlugRelatedField(slug_field="username", read_only=True)
    source = serializers.CharField(source="via", read_only=True)  # the API's name, kept for its clients

    class Meta:
        model = ElicitationEvent
        fields = ["at", "status", "source", "actor", "oauth_client", "note"]


class ElicitationSerializer(serializers.ModelSerializer[Elicitation]):
    tenant = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    completed_by = serializers.SlugRelatedField(source="completed_by_user", slug_field="username", read_only=True)
    flagged = serializers.SerializerMethodField()

    class Meta:
        model = Elicitation
        fields = [
            "id",
            "tenant",
            "kind",
            "status",
            "tool",
            "reference",
            "message",
            "url",
            "amount",
            "currency",
            "client_id",
            "subject",
            "created_at",
            "expires_at",
            "completed_at",
            "completed_by",
            "outcome",
            "flagged",
        ]

    def get_flagged(self, row: Elicitation) -> bool:
        """Whether a webhook delivery for it was flagged for staff (money arrived for nothing)."""
        flagged = getattr(row, "has_flagged_delivery", None)
        return bool(flagged if flagged is not None else row.deliveries.filter(flagged=True).exists())


class ElicitationDetailSerializer(ElicitationSerializer):
    events = EventSerializer(many=True, read_only=True)
    deliveries = DeliverySerializer(many=True, read_only=True)

    class Meta(ElicitationSerializer.Meta):
        fields = [*ElicitationSerializer.Meta.fields, "events", "deliveries"]


class NoteSerializer(serializers.Serializer[Any]):
    note = serializers.CharField(required=False, allow_blank=True, default="", max_length=2000)


class ReasonSerializer(serializers.Serializer[Any]):
    reason = serializers.CharField(required=False, allow_blank=True, default="", max_length=2000)


class RequiredReasonSerializer(serializers.Serializer[Any]):
    reason = serializers.CharField(max_length=2000, help_text="Why it is marked completed (kept in the audit trail).")


class KeySerializer(serializers.ModelSerializer[RequestStateKey]):
    """A key's id and phase; its material is never part of any answer."""

    loaded_by = serializers.SerializerMethodField()

    class Meta:
        model = RequestStateKey
        fields = ["kid", "phase", "created_at", "minting_since", "minting_until", "retired_at", "loaded_by"]

    def get_loaded_by(self, key: RequestStateKey) -> dict[str, int] | None:
        """How many live processes have loaded a ring holding this key (null once retired)."""
        if key.phase == RequestStateKey.Phase.RETIRED:
            return None
        rollout = rotation.keyring_rollout(kid=key.kid)
        return {"live": rollout.live, "loaded": rollout.loaded}


class RetireSerializer(serializers.Serializer[Any]):
    now = serializers.BooleanField(
        required=False, default=False, help_text="A compromised key: retire at once; rounds sealed with it fail."
    )


class TenantSerializer(serializers.ModelSerializer[Tenant]):
    members = serializers.SlugRelatedField(slug_field="username", many=True, read_only=True)
    endpoint = serializers.SerializerMethodField()

    class Meta:
        model = Tenant
        fields = [
            "slug", "name", "enabled", "public", "toolsets", "call_quota", "call_quota_per_person", "members",
            "endpoint", "created_at", "updated_at",
        ]  # fmt: skip

    def get_endpoint(self, tenant: Tenant) -> str:
        return tenant.resource_url()


class TenantCreateSerializer(serializers.Serializer[Any]):
    slug = serializers.CharField(max_length=63)
    name = serializers.CharField(max_length=200)
    toolsets = serializers.ListField(child=serializers.CharField(), default=list)
    public = serializers.BooleanField(default=False)
    enabled = serializers.BooleanField(default=True)


class TenantUpdateSerializer(serializers.Serializer[Any]):
    enabled = serializers.BooleanField(required=False)
    toolsets = serializers.ListField(child=serializers.CharField(), required=False)
    # MCP requests per quota window; null: the site's default again; 0: no limit.
    call_quota = serializers.IntegerField(required=False, allow_null=True, min_value=0, max_value=2**31 - 1)
    call_quota_per_person = serializers.IntegerField(required=False, allow_null=True, min_value=0, max_value=2**31 - 1)


class MemberSerializer(serializers.Serializer[Any]):
    username = serializers.CharField(max_length=150)


class RoleSerializer(serializers.ModelSerializer[Role]):
    holders = serializers.SerializerMethodField()

    class Meta:
        model = Role
        fields = ["id", "name", "tools", "toolsets", "holders"]

    def get_holders(self, role: Role) -> list[str]:
        """The usernames of the members holding it."""
        return sorted(held.user.get_username() for held in role.holders.all())


class RoleWriteSerializer(serializers.Serializer[Any]):
    name = serializers.CharField(max_length=100)
    tools = serializers.ListField(
        child=serializers.CharField(max_length=200), max_length=500, default=list, help_text="Tool names it may call."
    )
    toolsets = serializers.ListField(
        child=serializers.CharField(max_length=200),
        max_length=500,
        default=list,
        help_text="Toolsets (of the tenant's) whose every tool it may call.",
    )


class MemberRoleSerializer(serializers.Serializer[Any]):
    role = serializers.IntegerField(allow_null=True, help_text="One of the tenant's role ids; null: every tool.")


class MemberRoleAnswerSerializer(serializers.Serializer[Any]):
    username = serializers.CharField()
    role = serializers.IntegerField(allow_null=True)


class TaskSerializer(serializers.ModelSerializer[Task]):
    tenant = serializers.SlugRelatedField(slug_field="slug", read_only=True)

    class Meta:
        model = Task
        fields = [
            "id", "tenant", "tool", "status", "client_id", "issuer", "subject", "attempts",
            "created_at", "updated_at", "expires_at",
        ]  # fmt: skip


class TaskDetailSerializer(TaskSerializer):
    class Meta(TaskSerializer.Meta):
        fields = [
            *TaskSerializer.Meta.fields, "arguments", "input_requests", "result", "error", "max_attempts",
            "worker", "claimed_until",
        ]  # fmt: skip


TOOL_CALL_FIELDS = [
    "id", "at", "tenant", "user", "client_id", "issuer", "subject", "tool", "arguments_digest", "arguments",
    "outcome", "error_code", "duration_ms", "request_id", "generation", "task_id",
]  # fmt: skip


class ToolCallSerializer(serializers.ModelSerializer[ToolCall]):
    """One audit row; the JSON Lines export writes the same fields (`operator_api.views.audit`)."""

    tenant = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    user = serializers.SlugRelatedField(slug_field="username", read_only=True)

    class Meta:
        model = ToolCall
        fields = TOOL_CALL_FIELDS
