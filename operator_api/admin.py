from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from operator_api.models import OperatorClient


@admin.register(OperatorClient)
class OperatorClientAdmin(admin.ModelAdmin):
    """Machine clients are made by `manage.py operator_client` (it shows the secret once); here staff
    see them and may delete one: the token endpoint then refuses it and the API its tokens."""

    list_display = ["application", "operator", "scope_list", "created_by", "created_at"]
    list_select_related = ["application__user", "created_by"]
    readonly_fields = ["application", "scopes", "created_by", "created_at"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    @admin.display(description="acts for")
    def operator(self, client: OperatorClient) -> str:
        return str(client.application.user or "-")

    @admin.display(description="scopes")
    def scope_list(self, client: OperatorClient) -> str:
        return " ".join(client.scopes)
