"""Staff watch tasks and cancel live ones. Everything on a task was written by the protocol or
its worker, so the pages are read-only; cancelling goes through the same service as tasks/cancel."""

from __future__ import annotations

import json
from typing import Any

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils.html import format_html
from django.utils.safestring import SafeString

from mcp_tasks import services
from mcp_tasks.models import Task
from mcpsite.actors import Actor, Via
from mcpsite.admin_access import ViewOnly


@admin.register(Task)
class TaskAdmin(ViewOnly, admin.ModelAdmin):  # read-only: the protocol and the worker write tasks
    list_display = ["short_id", "tool", "tenant", "subject", "status", "attempts", "created_at", "updated_at"]
    list_filter = ["status", "tenant", "tool"]
    list_select_related = ["tenant"]
    search_fields = ["id", "tool", "subject", "client_id"]
    date_hierarchy = "created_at"
    actions = ["cancel_tasks"]
    readonly_fields = [
        "id", "tenant", "tool", "status", "client_id", "issuer", "subject", "shown_arguments",
        "shown_input_requests", "shown_result", "shown_error", "attempts", "max_attempts", "worker",
        "claimed_until", "created_at", "updated_at", "expires_at",
    ]  # fmt: skip
    fields = tuple(readonly_fields)

    @admin.display(description="task", ordering="id")
    def short_id(self, task: Task) -> str:
        return f"{task.pk[:14]}…"

    @admin.display(description="arguments")
    def shown_arguments(self, task: Task) -> SafeString:
        return _json(task.arguments)

    @admin.display(description="input requests")
    def shown_input_requests(self, task: Task) -> SafeString:
        return _json(task.input_requests)

    @admin.display(description="result")
    def shown_result(self, task: Task) -> SafeString:
        return _json(task.result)

    @admin.display(description="error")
    def shown_error(self, task: Task) -> SafeString:
        return _json(task.error)

    @admin.action(description="Cancel selected live tasks", permissions=["cancel"])
    def cancel_tasks(self, request: HttpRequest, queryset: QuerySet[Task]) -> None:
        cancelled = 0
        for task in queryset.filter(status__in=Task.LIVE_STATUSES):
            services.task_cancel(
                task_id=task.pk, tenant_id=task.tenant_id, principal=None, actor=Actor(Via.STAFF, request.user)
            )
            cancelled += 1
        self.message_user(
            request, f"Cancelled {cancelled} task(s); ended ones were left as they ended.", messages.SUCCESS
        )

    def has_cancel_permission(self, request: HttpRequest) -> bool:
        return bool(request.user.has_perm("mcp_tasks.cancel_task"))


def _json(value: Any) -> SafeString:
    if value in (None, {}, ""):
        return format_html("{}", "-")
    return format_html("<pre>{}</pre>", json.dumps(value, indent=2, sort_keys=True))
