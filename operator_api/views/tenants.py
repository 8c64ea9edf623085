from __future__ import annotations

from django.contrib.auth import get_user_model
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import mixins, status, viewsets
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from mcpsite import services
from mcpsite.models import Tenant
from operator_api import serializers as s
from operator_api.pagination import BySlug

VIEW = ("tenants:write", "mcpsite.view_tenant")
CHANGE = ("tenants:write", "mcpsite.change_tenant")


class TenantViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet[Tenant]):
    """Tenants: create, enable or disable, set toolsets, add and remove members."""

    operator_rules = {
        "list": VIEW,
        "retrieve": VIEW,
        "members": VIEW,
        "create": ("tenants:write", "mcpsite.add_tenant"),
        "partial_update": CHANGE,
        "add_member": CHANGE,
        "remove_member": CHANGE,
    }
    queryset = Tenant.objects.prefetch_related("members")
    serializer_class = s.TenantSerializer
    pagination_class = BySlug
    lookup_field = "slug"

    @extend_schema(request=s.TenantCreateSerializer, responses={201: s.TenantSerializer})
    def create(self, request: Request) -> Response:
        body = s.TenantCreateSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        tenant = services.tenant_create(**body.validated_data)
        return Response(s.TenantSerializer(tenant).data, status=status.HTTP_201_CREATED)

    @extend_schema(request=s.TenantUpdateSerializer, responses=s.TenantSerializer)
    def partial_update(self, request: Request, slug: str) -> Response:
        """Enable or disable the tenant (disabled answers 404 at its endpoint), replace its toolsets,
        or set its call quotas (MCP requests per window; null: the site's default; 0: no limit)."""
        body = s.TenantUpdateSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        tenant = services.tenant_update(tenant=self.get_object(), **body.validated_data)
        return Response(s.TenantSerializer(tenant).data)

    @extend_schema(request=None, responses=s.MemberSerializer(many=True))
    @action(detail=True, methods=["get"])
    def members(self, request: Request, slug: str) -> Response:
        tenant = self.get_object()
        return Response([{"username": user.get_username()} for user in tenant.members.order_by("username")])

    @extend_schema(request=s.MemberSerializer, responses={201: s.MemberSerializer})
    @members.mapping.post
    def add_member(self, request: Request, slug: str) -> Response:
        body = s.MemberSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        user = get_object_or_404(get_user_model(), username=body.validated_data["username"])
        services.tenant_member_add(tenant=self.get_object(), user=user)
        return Response({"username": user.get_username()}, status=status.HTTP_201_CREATED)

    @extend_schema(request=None, responses={204: None})
    @action(detail=True, methods=["delete"], url_path="members/(?P<username>[^/]+)")
    def remove_member(self, request: Request, slug: str, username: str) -> Response:
        """Remove a member; their tokens for this tenant are revoked in every process at once."""
        user = get_object_or_404(get_user_model(), username=username)
        services.tenant_member_remove(tenant=self.get_object(), user=user)
        return Response(status=status.HTTP_204_NO_CONTENT)
