from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin
from django.forms.models import construct_instance
from django.http import HttpRequest
from oauth2_provider.admin import ApplicationAdmin as DotApplicationAdmin
from oauth2_provider.models import (
    Application,
    get_access_token_admin_class,
    get_access_token_model,
    get_grant_admin_class,
    get_grant_model,
    get_id_token_admin_class,
    get_id_token_model,
    get_refresh_token_admin_class,
    get_refresh_token_model,
)

from mcpsite.actors import Actor, Via
from mcpsite.admin_access import NoDeleting, ViewOnly
from operator_api import services
from operator_api.models import OperatorClient, OperatorClientEvent


@admin.register(OperatorClient)
class OperatorClientAdmin(ViewOnly, admin.ModelAdmin):
    """Machine clients are made by `manage.py operator_client` (it shows the secret once); here staff
    see them and may delete one: the token endpoint then refuses it and the API its tokens."""

    list_display = ["application", "operator", "scope_list", "created_by", "created_at"]
    list_select_related = ["application__user", "created_by"]
    readonly_fields = ["application", "scopes", "created_by", "created_at"]

    @admin.display(description="acts for")
    def operator(self, client: OperatorClient) -> str:
        return str(client.application.user or "-")

    @admin.display(description="scopes")
    def scope_list(self, client: OperatorClient) -> str:
        return " ".join(client.scopes)


@admin.register(OperatorClientEvent)
class OperatorClientEventAdmin(ViewOnly, NoDeleting, admin.ModelAdmin):
    """The audit trail: read only, for everyone."""

    list_display = ["at", "client_id", "actor", "note", "via", "oauth_client"]
    list_filter = ["via"]
    list_select_related = ["actor"]


def _is_operator_client(application: Application | None) -> bool:
    return application is not None and OperatorClient.objects.filter(application_id=application.pk).exists()


# django-oauth-toolkit's own admin for applications, with one rule added: an operator machine
# client's token acts with its operator's permissions, so its user, secret, grant and client type
# are changed only through `services.operator_client_change` (who may, and the audit).
admin.site.unregister(Application)


@admin.register(Application)
class ApplicationAdmin(DotApplicationAdmin):
    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        readonly = tuple(super().get_readonly_fields(request, obj))
        if _is_operator_client(obj) and not request.user.has_perm(services.CHANGE_PERMISSION):
            readonly += tuple(name for name in services.GUARDED_FIELDS if name not in readonly)
        return readonly

    def get_form(self, request: HttpRequest, obj: Any = None, change: bool = False, **kwargs: Any) -> Any:
        form = super().get_form(request, obj, change=change, **kwargs)
        if not _is_operator_client(obj):
            return form

        class OperatorClientForm(form):  # type: ignore[valid-type,misc]
            def clean(self) -> dict[str, Any]:
                cleaned: dict[str, Any] = super().clean()
                before = Application.objects.select_related("user", "operator").get(pk=obj.pk)
                after = construct_instance(self, Application.objects.get(pk=obj.pk))
                try:
                    services.operator_client_changes(actor=request.user, before=before, after=after)
                except services.OperatorClientRefused as refused:
                    raise forms.ValidationError(str(refused)) from None
                return cleaned

        return OperatorClientForm

    def save_model(self, request: HttpRequest, obj: Any, form: Any, change: bool) -> None:
        if change and _is_operator_client(obj):
            services.operator_client_change(application=obj, actor=Actor(Via.STAFF, request.user))
        else:
            super().save_model(request, obj, form, change)


class IssuedByTheFlows:
    """Tokens, grants and ID tokens are issued by the OAuth flows for one user and one client.
    django-oauth-toolkit's admins let staff holding the matching change permission edit one's user,
    client, scope or expiry, which hands whoever holds that credential another person's
    permissions (the same escalation as re-pointing an operator client). So every field is read
    only here; revoking (the library's action) and the views stay as they were. Fields the library
    hides (the token or code itself) stay hidden."""

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        readonly = tuple(super().get_readonly_fields(request, obj))  # type: ignore[misc]
        hidden = set(self.get_exclude(request, obj) or ())  # type: ignore[attr-defined]
        fields = self.model._meta.concrete_fields  # type: ignore[attr-defined]
        return readonly + tuple(f.name for f in fields if f.name not in readonly and f.name not in hidden)


def _read_only(model: Any, library_admin: Any) -> None:
    admin.site.unregister(model)
    admin.site.register(model, type(library_admin.__name__, (IssuedByTheFlows, library_admin), {}))


_read_only(get_access_token_model(), get_access_token_admin_class())
_read_only(get_refresh_token_model(), get_refresh_token_admin_class())
_read_only(get_grant_model(), get_grant_admin_class())
_read_only(get_id_token_model(), get_id_token_admin_class())
