"""Durable tasks (`mcp_tasks`) at every tenant, newest first; staff may cancel a live one."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_view
from rest_framework import mixins, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import NotFound
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.serializers import Serializer

from mcp_tasks import services
from mcp_tasks.models import Task
from operator_api import serializers as s
from operator_api.views import actor_of, by_choice

READ = ("tasks:read", "mcp_tasks.view_task")
WRITE = ("tasks:write", "mcp_tasks.cancel_task")

FILTERS = [
    OpenApiParameter("tenant", str, description="tenant slug"),
    OpenApiParameter("status", str, enum=Task.Status.values),
    OpenApiParameter("tool", str),
]


@extend_schema_view(list=extend_schema(parameters=FILTERS))
class TaskViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet[Task]):
    """Tasks (long tool calls clients poll) at every tenant, newest first."""

    operator_rules = {"list": READ, "retrieve": READ, "cancel": WRITE}

    def get_queryset(self) -> QuerySet[Task]:
        rows = Task.objects.select_related("tenant")
        if self.action != "list" or getattr(self, "swagger_fake_view", False):
            return rows
        query = self.request.query_params
        rows = by_choice(rows, self.request, "status", Task.Status)
        if "tenant" in query:
            rows = rows.filter(tenant__slug=query["tenant"])
        if "tool" in query:
            rows = rows.filter(tool=query["tool"])
        return rows

    def get_serializer_class(self) -> type[Serializer[Any]]:
        return s.TaskSerializer if self.action == "list" else s.TaskDetailSerializer

    @extend_schema(request=None, responses=s.TaskDetailSerializer)
    @action(detail=True, methods=["post"])
    def cancel(self, request: Request, pk: str) -> Response:
        """Cancel a live task (its worker stops at its next lease renewal); an ended one is left as it ended."""
        task = self.get_queryset().filter(pk=pk).first()
        if task is None:
            raise NotFound()
        services.task_cancel(task_id=task.pk, tenant_id=task.tenant_id, principal=None, actor=actor_of(request))
        return Response(s.TaskDetailSerializer(self.get_queryset().get(pk=task.pk)).data)
