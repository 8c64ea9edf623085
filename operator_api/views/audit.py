"""The tool-call audit log (`audit`): a page at a time by cursor, or a time range as JSON Lines.

- ``GET /api/v1/audit/``: newest first, cursor pages (``next``/``previous`` links), filtered by
  ``tenant`` (slug), ``user`` (username), ``tool``, ``outcome``, ``since`` and ``until`` (ISO 8601).
- ``GET /api/v1/audit/stream/?since=...&until=...``: every row of the range (and the same
  filters), oldest first, one JSON object a line (``application/jsonl``), the same fields as a
  page's rows. Read ``STREAM_BATCH_SIZE`` rows per query by id, never the range at once, so any
  range streams in bounded memory; ``until`` defaults to now.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any

from channels.db import database_sync_to_async
from django.core.serializers.json import DjangoJSONEncoder
from django.db.models import QuerySet
from django.http import StreamingHttpResponse
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema, extend_schema_view
from rest_framework import mixins, serializers, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request

from audit.conf import audit_settings
from audit.models import ToolCall
from operator_api import serializers as s
from operator_api.pagination import NewestIdFirst
from operator_api.views import by_choice

READ = ("audit:read", "audit.view_toolcall")

FILTERS = [
    OpenApiParameter("tenant", str, description="tenant slug"),
    OpenApiParameter("user", str, description="username"),
    OpenApiParameter("tool", str),
    OpenApiParameter("outcome", str, enum=ToolCall.Outcome.values),
    OpenApiParameter("since", OpenApiTypes.DATETIME, description="calls at or after (ISO 8601; UTC if no offset)"),
    OpenApiParameter("until", OpenApiTypes.DATETIME, description="calls before (ISO 8601; UTC if no offset)"),
]

# The export's rows as `values()` reads them -> the field each is written as (the serializer's).
_COLUMNS = {name: name for name in s.TOOL_CALL_FIELDS} | {"tenant": "tenant__slug", "user": "user__username"}
_AT = serializers.DateTimeField()  # the time written as a page writes it


def _moment(request: Request, name: str) -> datetime | None:
    value = request.query_params.get(name)
    if value is None:
        return None
    try:
        parsed = parse_datetime(value)
    except ValueError:
        parsed = None
    if parsed is None:
        raise ValidationError({name: "a date and time in ISO 8601 (2026-12-06T03:00:00Z)"})
    return parsed if timezone.is_aware(parsed) else parsed.replace(tzinfo=UTC)


@extend_schema_view(list=extend_schema(parameters=FILTERS))
class ToolCallViewSet(mixins.ListModelMixin, viewsets.GenericViewSet[ToolCall]):
    """Every tools/call at every tenant: who, which tool, an arguments digest, how it ended."""

    operator_rules = {"list": READ, "stream": READ}
    serializer_class = s.ToolCallSerializer
    pagination_class = NewestIdFirst

    def get_queryset(self) -> QuerySet[ToolCall]:
        rows = ToolCall.objects.select_related("tenant", "user")
        if getattr(self, "swagger_fake_view", False):
            return rows
        query = self.request.query_params
        rows = by_choice(rows, self.request, "outcome", ToolCall.Outcome)
        if "tenant" in query:
            rows = rows.filter(tenant__slug=query["tenant"])
        if "user" in query:
            rows = rows.filter(user__username=query["user"])
        if "tool" in query:
            rows = rows.filter(tool=query["tool"])
        since, until = _moment(self.request, "since"), _moment(self.request, "until")
        if since is not None:
            rows = rows.filter(at__gte=since)
        if until is not None:
            rows = rows.filter(at__lt=until)
        return rows

    @extend_schema(
        parameters=FILTERS,
        responses={(200, "application/jsonl"): OpenApiResponse(OpenApiTypes.STR, description="one row a line")},
    )
    @action(detail=False, methods=["get"])
    def stream(self, request: Request) -> StreamingHttpResponse:
        """Every call of a time range (``since`` required), oldest first, as JSON Lines."""
        if "since" not in request.query_params:
            raise ValidationError({"since": "required: the start of the range to export"})
        rows = self.get_queryset()
        if "until" not in request.query_params:
            rows = rows.filter(at__lt=timezone.now())  # a fixed end: rows written meanwhile wait for the next export
        response = StreamingHttpResponse(_lines(rows, audit_settings()["STREAM_BATCH_SIZE"]))
        response["Content-Type"] = "application/jsonl"
        return response


async def _lines(rows: QuerySet[ToolCall], batch_size: int) -> AsyncIterator[bytes]:
    """The rows a batch at a time, each batch one query after the last id sent (keyset): memory
    stays one batch, and no query or cursor lives for the whole export."""
    columns = list(_COLUMNS.values())
    after = 0
    while True:
        batch = await database_sync_to_async(_batch, thread_sensitive=False)(rows, columns, after, batch_size)
        if not batch:
            return
        yield "".join(_line(row) for row in batch).encode()
        if len(batch) < batch_size:
            return
        after = batch[-1]["id"]


def _batch(rows: QuerySet[ToolCall], columns: list[str], after: int, size: int) -> list[dict[str, Any]]:
    return list(rows.filter(id__gt=after).order_by("id").values(*columns)[:size])


def _line(row: dict[str, Any]) -> str:
    fields = {name: row[column] for name, column in _COLUMNS.items()}
    fields["at"] = _AT.to_representation(fields["at"])
    return json.dumps(fields, cls=DjangoJSONEncoder) + "\n"
