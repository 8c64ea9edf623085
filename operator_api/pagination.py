"""Cursor pagination for the API's lists. A cursor is only ever the one a ``next`` or ``previous``
link carries; one that does not decode, or whose position is not a value of the ordering column (a
cursor edited by hand), is refused with 400 ``{"cursor": ...}`` (DRF answers the first with 404 and
let the second reach the database filter: a 500)."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError as DjangoValidationError
from django.db.models import Field, Model, QuerySet
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.pagination import Cursor, CursorPagination
from rest_framework.request import Request
from rest_framework.views import APIView

INVALID_CURSOR = "invalid cursor: follow the next and previous links as given"


class _CheckedCursor(CursorPagination):
    page_size_query_param = "page_size"
    max_page_size = 500
    _position_field: Field[Any, Any] | None = None

    def paginate_queryset(
        self, queryset: QuerySet[Any], request: Request, view: APIView | None = None
    ) -> list[Any] | None:
        model: type[Model] = queryset.model
        self._position_field = model._meta.get_field(str(self.ordering).lstrip("-"))
        return super().paginate_queryset(queryset, request, view)

    def decode_cursor(self, request: Request) -> Cursor | None:
        try:
            cursor = super().decode_cursor(request)
        except NotFound:
            raise ValidationError({"cursor": INVALID_CURSOR}) from None
        if cursor is not None and cursor.position is not None and self._position_field is not None:
            try:
                self._position_field.get_prep_value(cursor.position)
            except (DjangoValidationError, ValueError, OverflowError):
                raise ValidationError({"cursor": INVALID_CURSOR}) from None
        return cursor


class NewestFirst(_CheckedCursor):
    """Cursor pagination, newest first: a page stays stable while rows are added at the top."""

    ordering = "-created_at"


class NewestReceivedFirst(_CheckedCursor):
    ordering = "-received_at"


class BySlug(_CheckedCursor):
    ordering = "slug"


class NewestIdFirst(_CheckedCursor):
    """By id, newest first: for rows written in batches, whose times may arrive out of order."""

    ordering = "-id"
