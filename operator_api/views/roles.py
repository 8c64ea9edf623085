"""A tenant's member roles: what each role may call, and which role a member holds."""

from __future__ import annotations

from django.db.models import QuerySet
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_view
from rest_framework import mixins, status, viewsets
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from mcpsite import services
from mcpsite.models import Role, Tenant
from operator_api import serializers as s


def _tenant(slug: str) -> Tenant:
    return get_object_or_404(Tenant, slug=slug)


TENANT = OpenApiParameter("slug", str, OpenApiParameter.PATH, description="The tenant's slug.")


@extend_schema_view(
    list=extend_schema(parameters=[TENANT]),
    create=extend_schema(parameters=[TENANT]),
    partial_update=extend_schema(parameters=[TENANT]),
    destroy=extend_schema(parameters=[TENANT]),
)
class RoleViewSet(mixins.ListModelMixin, viewsets.GenericViewSet[Role]):
    """A tenant's roles: each names the tools and toolsets its holders may call (a member holding
    none calls every tool). A change reaches every process at its holders' next call."""

    operator_rules = {
        "list": ("tenants:write", "mcpsite.view_role"),
        "create": ("tenants:write", "mcpsite.add_role"),
        "partial_update": ("tenants:write", "mcpsite.change_role"),
        "destroy": ("tenants:write", "mcpsite.delete_role"),
    }
    serializer_class = s.RoleSerializer
    pagination_class = None  # a handful per tenant
    lookup_value_regex = r"\d+"

    def get_queryset(self) -> QuerySet[Role]:
        # Only this tenant's: another tenant's role id is not found here.
        return Role.objects.filter(tenant__slug=self.kwargs["slug"]).prefetch_related("holders__user")

    def list(self, request: Request, slug: str) -> Response:
        _tenant(slug)  # an unknown tenant is 404, not an empty list
        return super().list(request)

    @extend_schema(request=s.RoleWriteSerializer, responses={201: s.RoleSerializer})
    def create(self, request: Request, slug: str) -> Response:
        body = s.RoleWriteSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        role = services.role_create(tenant=_tenant(slug), **body.validated_data)
        return Response(s.RoleSerializer(role).data, status=status.HTTP_201_CREATED)

    @extend_schema(request=s.RoleWriteSerializer(partial=True), responses=s.RoleSerializer)
    def partial_update(self, request: Request, slug: str, pk: str) -> Response:
        body = s.RoleWriteSerializer(data=request.data, partial=True)
        body.is_valid(raise_exception=True)
        role = services.role_update(role=self.get_object(), **body.validated_data)
        return Response(s.RoleSerializer(role).data)

    @extend_schema(request=None, responses={204: None})
    def destroy(self, request: Request, slug: str, pk: str) -> Response:
        """Delete a role nobody holds (400 while a member holds it)."""
        services.role_delete(role=self.get_object())
        return Response(status=status.HTTP_204_NO_CONTENT)


class MemberRoleView(APIView):
    """The role a member holds at the tenant."""

    operator_rules = {"put": ("tenants:write", "mcpsite.change_memberrole")}

    @extend_schema(request=s.MemberRoleSerializer, responses=s.MemberRoleAnswerSerializer)
    def put(self, request: Request, slug: str, username: str) -> Response:
        """Give the member one of the tenant's roles, or none (null: every tool)."""
        tenant = _tenant(slug)
        user = get_object_or_404(tenant.members.all(), username=username)
        body = s.MemberRoleSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        role_id = body.validated_data["role"]
        role = None
        if role_id is not None:
            role = Role.objects.filter(tenant=tenant, pk=role_id).first()
            if role is None:
                raise ValidationError({"role": [f"{tenant.slug} has no role {role_id}."]})
        services.member_role_set(tenant=tenant, user=user, role=role)
        return Response({"username": user.get_username(), "role": role_id})
