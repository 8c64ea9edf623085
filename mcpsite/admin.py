from __future__ import annotations

from functools import partial
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.html import format_html

from mcpsite.actors import Actor, Via
from mcpsite.admin_access import NoDeleting, NoEditing, ViewOnly
from mcpsite.keyring import rotation
from mcpsite.models import KeyRingEvent, MemberRole, ProcessHeartbeat, RequestStateKey, Role, Tenant
from mcpsite.tenancy import tool_choices, toolset_choices


class TenantForm(forms.ModelForm):
    toolsets = forms.MultipleChoiceField(choices=toolset_choices, required=False, widget=forms.CheckboxSelectMultiple)

    class Meta:
        model = Tenant
        fields = ["slug", "name", "enabled", "public", "toolsets", "call_quota", "call_quota_per_person", "members"]


class RoleForm(forms.ModelForm):
    tools = forms.MultipleChoiceField(choices=tool_choices, required=False)
    toolsets = forms.MultipleChoiceField(choices=toolset_choices, required=False, widget=forms.CheckboxSelectMultiple)

    class Meta:
        model = Role
        fields = ["name", "toolsets", "tools"]


class RoleInline(admin.StackedInline):
    """The tenant's roles: what each may call (checked against the tenant's toolsets when saved)."""

    model = Role
    form = RoleForm
    extra = 0


class MemberRoleInline(admin.TabularInline):
    """Which role a member holds (none: every tool). Members and roles added here appear once saved."""

    model = MemberRole
    fields = ["user", "role"]
    extra = 0
    verbose_name = "member's role"
    verbose_name_plural = "members' roles (a member without one may call every tool)"

    def get_formset(self, request: HttpRequest, obj: Any = None, **kwargs: Any) -> Any:
        kwargs["formfield_callback"] = partial(self._field_for, request=request, tenant=obj)
        return super().get_formset(request, obj, **kwargs)

    def _field_for(self, db_field: Any, *, request: HttpRequest, tenant: Tenant | None, **kwargs: Any) -> Any:
        # Only this tenant's members and roles are offered (`MemberRole.clean` checks the same).
        if db_field.name == "user":
            kwargs["queryset"] = tenant.members.order_by("username") if tenant else get_user_model().objects.none()
        elif db_field.name == "role":
            kwargs["queryset"] = tenant.roles.all() if tenant else Role.objects.none()
        return self.formfield_for_dbfield(db_field, request, **kwargs)


@admin.register(Tenant)
class TenantAdmin(admin.ModelAdmin):
    form = TenantForm
    inlines = [RoleInline, MemberRoleInline]
    list_display = ["slug", "name", "enabled", "public", "toolset_list", "endpoint"]
    list_filter = ["enabled", "public"]
    search_fields = ["slug", "name"]
    filter_horizontal = ["members"]
    readonly_fields = ["created_at", "updated_at"]

    def save_related(self, request: HttpRequest, form: Any, formsets: Any, change: bool) -> None:
        super().save_related(request, form, formsets, change)
        # A member removed in the same save loses the role a form of this page may have kept.
        MemberRole.objects.filter(tenant=form.instance).of_former_members().delete()

    @admin.display(description="toolsets")
    def toolset_list(self, tenant: Tenant) -> str:
        return ", ".join(tenant.toolsets) or "-"

    @admin.display(description="MCP endpoint")
    def endpoint(self, tenant: Tenant) -> str:
        return format_html("<code>{}</code>", tenant.resource_url())


@admin.register(RequestStateKey)
class RequestStateKeyAdmin(NoEditing, NoDeleting, admin.ModelAdmin):
    """Rotation: add (verifying) -> promote -> retire, each step guarded and audited.

    Key material is never shown; only users with the ``rotate_requeststatekey`` permission may
    change the ring, other staff see it read-only.
    """

    list_display = ["kid", "phase", "rollout", "created_at", "minting_since", "minting_until", "retired_at"]
    list_filter = ["phase"]
    fields = readonly_fields = ("kid", "phase", "created_at", "minting_since", "minting_until", "retired_at")
    actions = ["promote", "retire", "retire_now"]
    change_list_template = "admin/mcpsite/requeststatekey/change_list.html"

    def has_add_permission(self, request: HttpRequest) -> bool:
        return self.has_rotate_permission(request)

    def has_rotate_permission(self, request: HttpRequest) -> bool:
        return request.user.has_perm("mcpsite.rotate_requeststatekey")

    @admin.display(description="loaded by")
    def rollout(self, key: RequestStateKey) -> str:
        if key.phase == RequestStateKey.Phase.RETIRED:
            return "-"
        rollout = rotation.keyring_rollout(kid=key.kid)
        return f"{rollout.loaded} of {rollout.live} live processes"

    def changelist_view(self, request: HttpRequest, extra_context: dict[str, Any] | None = None) -> HttpResponse:
        processes = list(ProcessHeartbeat.objects.live(within=rotation.heartbeat_live_within()))
        newest = RequestStateKey.objects.exclude(phase=RequestStateKey.Phase.RETIRED).values_list("kid", flat=True)
        newest_kids = sorted(newest)
        context = {
            "processes": processes,
            "on_newest": sum(1 for p in processes if sorted(p.ring_kids) == newest_kids),
            "propagation_bound": rotation.keyring_propagation_bound(),
            "events": KeyRingEvent.objects.select_related("actor")[:10],
            **(extra_context or {}),
        }
        return super().changelist_view(request, context)

    def add_view(self, request: HttpRequest, form_url: str = "", extra_context: Any = None) -> HttpResponse:
        if not self.has_add_permission(request):
            raise PermissionDenied
        if request.method == "POST":
            key = rotation.keyring_add_key(actor=Actor(Via.STAFF, request.user))
            self.message_user(
                request,
                f"Generated key {key.kid}. It verifies from now on; promote it once every process has loaded it "
                f"(within {rotation.keyring_propagation_bound():.0f} s).",
            )
            return HttpResponseRedirect(reverse("admin:mcpsite_requeststatekey_changelist"))
        context = {**self.admin_site.each_context(request), "opts": self.opts, "title": "Generate a requestState key"}
        return TemplateResponse(request, "admin/mcpsite/requeststatekey/add.html", context)

    @admin.action(description="Promote to minting (the current minting key keeps verifying)", permissions=["rotate"])
    def promote(self, request: HttpRequest, queryset: QuerySet[RequestStateKey]) -> None:
        if queryset.count() != 1:
            self.message_user(request, "Select exactly one key to promote.", messages.ERROR)
            return
        try:
            key = rotation.keyring_promote(key=queryset.get(), actor=Actor(Via.STAFF, request.user))
        except rotation.KeyRingRefused as refused:
            self.message_user(request, str(refused), messages.ERROR)
            return
        self.message_user(request, f"Key {key.kid} now mints new requestState; the previous key keeps verifying.")

    @admin.action(description="Retire (after one TTL since it stopped minting)", permissions=["rotate"])
    def retire(self, request: HttpRequest, queryset: QuerySet[RequestStateKey]) -> None:
        self._retire(request, queryset, now_override=False)

    @admin.action(
        description="Retire now: compromised key (rounds in flight sealed with it fail)", permissions=["rotate"]
    )
    def retire_now(self, request: HttpRequest, queryset: QuerySet[RequestStateKey]) -> None:
        self._retire(request, queryset, now_override=True)

    def _retire(self, request: HttpRequest, queryset: QuerySet[RequestStateKey], *, now_override: bool) -> None:
        for key in queryset:
            try:
                rotation.keyring_retire(key=key, actor=Actor(Via.STAFF, request.user), now_override=now_override)
            except rotation.KeyRingRefused as refused:
                self.message_user(request, str(refused), messages.ERROR)
                continue
            consequence = (
                " Every round in flight that was sealed with it now gets -32602 Invalid or expired requestState."
                if now_override
                else ""
            )
            self.message_user(
                request, f"Key {key.kid} retired.{consequence}", messages.WARNING if now_override else messages.SUCCESS
            )


@admin.register(KeyRingEvent)
class KeyRingEventAdmin(ViewOnly, NoDeleting, admin.ModelAdmin):
    # At 1366 px the nav sidebar, the filters and a 40-character client id left the Note column one
    # character wide: the sidebar is off here, the client id is shortened (whole on hover and on
    # the row's page), and the template gives the note room
    # (tests/admin/test_key_ring_event_notes_read_at_1366_px.py).
    list_display = ["at", "action", "kid", "actor", "acted_via", "note"]
    list_filter = ["action", "via"]
    search_fields = ["kid", "actor__username"]
    list_select_related = ["actor"]
    change_list_template = "admin/mcpsite/keyringevent/change_list.html"

    def changelist_view(self, request: HttpRequest, extra_context: dict[str, Any] | None = None) -> HttpResponse:
        return super().changelist_view(request, {"is_nav_sidebar_enabled": False, **(extra_context or {})})

    @admin.display(description="via", ordering="via")
    def acted_via(self, event: KeyRingEvent) -> str:
        if not event.oauth_client:
            return event.get_via_display()
        client = event.oauth_client
        short = client if len(client) <= 12 else f"{client[:10]}\N{HORIZONTAL ELLIPSIS}"
        return format_html('API client <code title="{}">{}</code>', client, short)


@admin.register(ProcessHeartbeat)
class ProcessHeartbeatAdmin(ViewOnly, admin.ModelAdmin):
    list_display = ["process_id", "ring_version", "ring_kids", "started_at", "seen_at"]
