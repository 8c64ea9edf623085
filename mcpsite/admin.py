from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.urls import reverse
from django.utils.html import format_html

from mcpsite import services
from mcpsite.models import RequestStateKey, Tenant
from tools_app.discovery import toolset_choices


class TenantForm(forms.ModelForm):
    toolsets = forms.MultipleChoiceField(choices=toolset_choices, required=False, widget=forms.CheckboxSelectMultiple)

    class Meta:
        model = Tenant
        fields = ["slug", "name", "enabled", "public", "toolsets", "members"]


@admin.register(Tenant)
class TenantAdmin(admin.ModelAdmin):
    form = TenantForm
    list_display = ["slug", "name", "enabled", "public", "toolset_list", "endpoint"]
    list_filter = ["enabled", "public"]
    search_fields = ["slug", "name"]
    filter_horizontal = ["members"]
    readonly_fields = ["created_at", "updated_at"]

    @admin.display(description="toolsets")
    def toolset_list(self, tenant: Tenant) -> str:
        return ", ".join(tenant.toolsets) or "-"

    @admin.display(description="MCP endpoint")
    def endpoint(self, tenant: Tenant) -> str:
        return format_html("<code>{}</code>", tenant.resource_url())


@admin.register(RequestStateKey)
class RequestStateKeyAdmin(admin.ModelAdmin):
    """Key material is never shown: only ids, phases and timestamps."""

    list_display = ["kid", "phase", "created_at", "minting_since", "minting_until", "retired_at"]
    list_filter = ["phase"]
    fields = readonly_fields = ("kid", "phase", "created_at", "minting_since", "minting_until", "retired_at")
    actions = ["promote", "retire"]

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def add_view(self, request: HttpRequest, form_url: str = "", extra_context: Any = None) -> HttpResponse:
        if request.method == "POST":
            key = services.keyring_add_key()
            self.message_user(request, f"Generated key {key.kid}; it verifies now and can be promoted to minting.")
            return HttpResponseRedirect(reverse("admin:mcpsite_requeststatekey_changelist"))
        return super().add_view(request, form_url, extra_context)

    @admin.action(description="Promote to minting (the current minting key keeps verifying)")
    def promote(self, request: HttpRequest, queryset: QuerySet[RequestStateKey]) -> None:
        if queryset.count() != 1:
            self.message_user(request, "Select exactly one key to promote.", messages.ERROR)
            return
        try:
            key = services.keyring_promote(key=queryset.get())
        except ValueError as exc:
            self.message_user(request, str(exc), messages.ERROR)
            return
        self.message_user(request, f"Key {key.kid} now mints new requestState.")

    @admin.action(description="Retire (state sealed with it stops verifying)")
    def retire(self, request: HttpRequest, queryset: QuerySet[RequestStateKey]) -> None:
        for key in queryset:
            try:
                services.keyring_retire(key=key)
            except ValueError as exc:
                self.message_user(request, str(exc), messages.ERROR)
            else:
                self.message_user(request, f"Key {key.kid} retired.")
