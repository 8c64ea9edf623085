"""Staff read the audit log; nobody changes or deletes it from the admin, a superuser included
(the retention clean-up is the only thing that deletes rows)."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest

from audit.models import ToolCall
from tools_app.discovery import toolsets


class ToolFilter(admin.SimpleListFilter):
    """By tool, offering the tools the site's toolsets have: read from discovery, not from a
    ``SELECT DISTINCT`` over the whole log (the default filter's query)."""

    title = "tool"
    parameter_name = "tool"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        names = {name for toolset in toolsets.values() for name in toolset.tool_names()}
        return [(name, name) for name in sorted(names)]

    def queryset(self, request: HttpRequest, queryset: QuerySet[ToolCall]) -> QuerySet[ToolCall]:
        return queryset.filter(tool=self.value()) if self.value() else queryset


@admin.register(ToolCall)
class ToolCallAdmin(admin.ModelAdmin):
    list_display = ["at", "tenant", "user", "client_id", "tool", "outcome", "error_code", "duration", "request_id"]
    list_filter = ["outcome", "tenant", "user", ToolFilter, "at"]
    list_select_related = ["tenant", "user"]
    search_fields = ["=request_id"]  # exact, on its index: find a call from a log line or a response
    date_hierarchy = "at"
    show_full_result_count = False  # no COUNT(*) of the whole log on every filtered page
    readonly_fields = [
        "at", "tenant", "user", "client_id", "issuer", "subject", "tool", "arguments_digest", "arguments",
        "outcome", "error_code", "duration_ms", "request_id", "generation", "task_id",
    ]  # fmt: skip
    fields = tuple(readonly_fields)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False  # written by the audit layer only

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False  # an audit record: not even a superuser deletes it here

    @admin.display(description="duration", ordering="duration_ms")
    def duration(self, row: ToolCall) -> str:
        return f"{row.duration_ms:.1f} ms"
