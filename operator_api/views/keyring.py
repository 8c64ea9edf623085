from __future__ import annotations

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import mixins, status, viewsets
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from mcpsite.keyring import rotation
from mcpsite.models import RequestStateKey
from operator_api import serializers as s
from operator_api.views import actor_of

ROTATE = ("keys:rotate", "mcpsite.rotate_requeststatekey")
REFUSED = OpenApiResponse(description='Refused by a guard: {"detail": why, "wait_seconds": how long} and Retry-After.')


class KeyViewSet(mixins.ListModelMixin, viewsets.GenericViewSet[RequestStateKey]):
    """The requestState key ring: add (verifying) -> promote (minting) -> retire, with the admin's guards.
    No answer ever holds key material."""

    operator_rules = {
        "list": ("keys:rotate", "mcpsite.view_requeststatekey"),
        "create": ROTATE,
        "promote": ROTATE,
        "retire": ROTATE,
    }
    queryset = RequestStateKey.objects.all()
    serializer_class = s.KeySerializer
    pagination_class = None  # a handful of keys
    lookup_field = "kid"

    @extend_schema(request=None, responses={201: s.KeySerializer})
    def create(self, request: Request) -> Response:
        """Generate a key server-side; it verifies at once and may be promoted once every process loaded it."""
        key = rotation.keyring_add_key(actor=actor_of(request))
        return Response(s.KeySerializer(key).data, status=status.HTTP_201_CREATED)

    @extend_schema(request=None, responses={200: s.KeySerializer, 409: REFUSED})
    @action(detail=True, methods=["post"])
    def promote(self, request: Request, kid: str) -> Response:
        """Make the key the minting key (the previous one keeps verifying); 409 until every live process loaded it."""
        key = get_object_or_404(RequestStateKey, kid=kid)
        key = rotation.keyring_promote(key=key, actor=actor_of(request))
        return Response(s.KeySerializer(key).data)

    @extend_schema(request=s.RetireSerializer, responses={200: s.KeySerializer, 409: REFUSED})
    @action(detail=True, methods=["post"])
    def retire(self, request: Request, kid: str) -> Response:
        """Stop verifying the key; 409 while it mints or state it sealed may be in flight (unless `now`)."""
        body = s.RetireSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        key = get_object_or_404(RequestStateKey, kid=kid)
        key = rotation.keyring_retire(key=key, actor=actor_of(request), now_override=body.validated_data["now"])
        return Response(s.KeySerializer(key).data)
