from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.db.models import Exists, OuterRef, QuerySet
from django.shortcuts import get_object_or_404
from django.utils import timezone
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_view
from rest_framework import mixins, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.serializers import Serializer

from approvals.models import Elicitation, WebhookDelivery
from approvals.services.staff import elicitation_end_by_staff
from operator_api import serializers as s
from operator_api.pagination import NewestReceivedFirst
from operator_api.views import actor_of, by_choice

READ = ("approvals:read", "approvals.view_elicitation")
WRITE = ("approvals:write", "approvals.change_elicitation")

FILTERS = [
    OpenApiParameter("tenant", str, description="tenant slug"),
    OpenApiParameter("kind", str, enum=Elicitation.Kind.values),
    OpenApiParameter("status", str, enum=Elicitation.Status.values),
    OpenApiParameter("older_than", int, description="created at least this many seconds ago"),
    OpenApiParameter("newer_than", int, description="created at most this many seconds ago"),
    OpenApiParameter("flagged", bool, description="with a webhook delivery flagged for staff"),
]


def _flag(request: Request, name: str) -> bool | None:
    value = request.query_params.get(name)
    if value is None:
        return None
    if value.lower() not in {"true", "false", "1", "0"}:
        raise ValidationError({name: "true or false"})
    return value.lower() in {"true", "1"}


# An age filter reaches back at most a century: further is before any row, and a timedelta (or
# the date it is subtracted from) overflows long before the number does.
MAX_AGE_SECONDS = 100 * 365 * 24 * 3600


def _seconds(request: Request, name: str) -> timedelta | None:
    value = request.query_params.get(name)
    if value is None:
        return None
    if not (value.isascii() and value.isdigit()):  # superscripts and other scripts' digits pass str.isdigit
        raise ValidationError({name: "a whole number of seconds"})
    if len(value) > len(str(MAX_AGE_SECONDS)) or int(value) > MAX_AGE_SECONDS:
        raise ValidationError({name: f"at most {MAX_AGE_SECONDS} seconds (100 years)"})
    return timedelta(seconds=int(value))


@extend_schema_view(list=extend_schema(parameters=FILTERS))
class ElicitationViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet[Elicitation]):
    """Elicitations (payments, approvals, consents) at every tenant, newest first."""

    operator_rules = {
        "list": READ,
        "retrieve": READ,
        "approve": WRITE,
        "deny": WRITE,
        "complete": WRITE,
        "cancel": WRITE,
        "expire": WRITE,
    }

    def get_queryset(self) -> QuerySet[Elicitation]:
        flagged = WebhookDelivery.objects.filter(elicitation=OuterRef("pk"), flagged=True)
        rows = Elicitation.objects.select_related("tenant", "completed_by_user").annotate(
            has_flagged_delivery=Exists(flagged)
        )
        if self.action != "list" or getattr(self, "swagger_fake_view", False):  # or the schema generator
            return rows.prefetch_related("events__actor", "deliveries")
        query, now = self.request.query_params, timezone.now()
        rows = by_choice(
            by_choice(rows, self.request, "kind", Elicitation.Kind), self.request, "status", Elicitation.Status
        )
        if "tenant" in query:
            rows = rows.filter(tenant__slug=query["tenant"])
        if (older := _seconds(self.request, "older_than")) is not None:
            rows = rows.filter(created_at__lte=now - older)
        if (newer := _seconds(self.request, "newer_than")) is not None:
            rows = rows.filter(created_at__gte=now - newer)
        if (wanted := _flag(self.request, "flagged")) is not None:
            rows = rows.filter(has_flagged_delivery=wanted)
        return rows

    def get_serializer_class(self) -> type[Serializer[Any]]:
        return s.ElicitationSerializer if self.action == "list" else s.ElicitationDetailSerializer

    def _act(self, request: Request, body: type[Serializer[Any]], action: str) -> Response:
        data = body(data=request.data)
        data.is_valid(raise_exception=True)
        row = get_object_or_404(Elicitation, pk=self.kwargs["pk"])
        elicitation_end_by_staff(
            elicitation=row,
            action=action,
            actor=actor_of(request),
            note=data.validated_data.get("note", data.validated_data.get("reason", "")),  # a decision's note, or why
        )
        return Response(s.ElicitationDetailSerializer(self.get_queryset().get(pk=row.pk)).data)

    @extend_schema(request=s.NoteSerializer, responses=s.ElicitationDetailSerializer)
    @action(detail=True, methods=["post"])
    def approve(self, request: Request, pk: str) -> Response:
        """Approve a pending approval (the waiting client is told at once); 409 if it already ended."""
        return self._act(request, s.NoteSerializer, "approve")

    @extend_schema(request=s.NoteSerializer, responses=s.ElicitationDetailSerializer)
    @action(detail=True, methods=["post"])
    def deny(self, request: Request, pk: str) -> Response:
        """Deny a pending approval; 409 if it already ended."""
        return self._act(request, s.NoteSerializer, "deny")

    @extend_schema(request=s.RequiredReasonSerializer, responses=s.ElicitationDetailSerializer)
    @action(detail=True, methods=["post"])
    def complete(self, request: Request, pk: str) -> Response:
        """Mark a pending step completed (e.g. paid out of band); the reason is required and audited."""
        return self._act(request, s.RequiredReasonSerializer, "complete")

    @extend_schema(request=s.ReasonSerializer, responses=s.ElicitationDetailSerializer)
    @action(detail=True, methods=["post"])
    def cancel(self, request: Request, pk: str) -> Response:
        """Cancel a pending step."""
        return self._act(request, s.ReasonSerializer, "cancel")

    @extend_schema(request=s.ReasonSerializer, responses=s.ElicitationDetailSerializer)
    @action(detail=True, methods=["post"])
    def expire(self, request: Request, pk: str) -> Response:
        """Expire a pending step now."""
        return self._act(request, s.ReasonSerializer, "expire")


@extend_schema_view(list=extend_schema(parameters=[OpenApiParameter("flagged", OpenApiTypes.BOOL)]))
class DeliveryViewSet(mixins.ListModelMixin, viewsets.GenericViewSet[WebhookDelivery]):
    """Verified payment-provider events, newest first; `flagged=true`: the ones staff must look at."""

    operator_rules = {"list": ("approvals:read", "approvals.view_webhookdelivery")}
    serializer_class = s.DeliverySerializer
    pagination_class = NewestReceivedFirst

    def get_queryset(self) -> QuerySet[WebhookDelivery]:
        rows = WebhookDelivery.objects.all()
        if getattr(self, "swagger_fake_view", False):  # the schema generator
            return rows
        if (wanted := _flag(self.request, "flagged")) is not None:
            rows = rows.filter(flagged=wanted)
        return rows
