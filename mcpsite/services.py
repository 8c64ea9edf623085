"""Workflows over several rows: bearer tokens and tenants. Admin, commands and tests call these.

Key ring rotation lives in `mcpsite.keyring.rotation`."""

from __future__ import annotations

import logging
import secrets
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Q, RestrictedError
from django.utils import timezone
from oauth2_provider.models import AccessToken, Application, Grant, IDToken, RefreshToken
from oauth2_provider.settings import oauth2_settings

from mcpsite.conf import mcpsite_settings
from mcpsite.exceptions import McpsiteError
from mcpsite.models import MemberRole, Role, Tenant
from mcpsite.scopes import tenant_scopes
from mcpsite.tenancy import toolsets_known

logger = logging.getLogger(__name__)

SCRIPT_CLIENT_NAME = "mcpsite scripts"


class TenantMembershipRequired(McpsiteError):
    def __init__(self, *, tenant: Tenant, user: AbstractBaseUser) -> None:
        super().__init__(f"{user} is not a member of tenant {tenant.slug}")
        self.tenant = tenant
        self.user = user


def script_application() -> Application:
    """The confidential OAuth client that `mcp_token` issues tokens for."""
    application, _ = Application.objects.get_or_create(
        name=SCRIPT_CLIENT_NAME,
        defaults={
            "client_type": Application.CLIENT_CONFIDENTIAL,
            "authorization_grant_type": Application.GRANT_CLIENT_CREDENTIALS,
        },
    )
    return application


@transaction.atomic
def token_issue(
    *,
    tenant: Tenant,
    user: AbstractBaseUser,
    application: Application | None = None,
    scope: str | None = None,
    expires_in: timedelta | None = None,
    site_root: str | None = None,
    resource: list[str] | None = None,
) -> AccessToken:
    """A bearer token for `user` at `tenant`'s MCP endpoint (RFC 8707: bound to its resource URL),
    with `scope` (space-separated), by default every scope the tenant's tools need (`mcp` and the
    scopes its toolsets' tools declare), so it calls every tool."""
    if not tenant.members.filter(pk=user.pk).exists():
        raise TenantMembershipRequired(tenant=tenant, user=user)
    if scope is None:
        scope = " ".join(tenant_scopes(tenant.toolsets or ()))
    lifetime = expires_in or timedelta(seconds=settings.ACCESS_TOKEN_SECONDS)
    return AccessToken.objects.create(
        user=user,
        application=application or script_application(),
        token=secrets.token_urlsafe(32),
        expires=timezone.now() + lifetime,
        scope=scope,
        resource=[tenant.resource_url(site_root)] if resource is None else resource,
    )


def _names_tenant(resources: list[str] | None, tenant: Tenant | None) -> bool:
    # By path, not by the whole URL: the same tenant may be reached under several site roots
    # (a proxy, a renamed host), and a token for any of them acts at this tenant.
    return tenant is None or any(urlsplit(resource).path == tenant.mcp_path for resource in resources or ())


@transaction.atomic
def token_revoke_for_member(*, user_id: int, tenant: Tenant | None = None) -> int:
    """Revoke `user_id`'s access and refresh tokens for `tenant` (every tenant when ``None``):
    called when a member is removed or a user deactivated. Returns how many access tokens went.

    Row by row through DOT's own `revoke()` (the refresh token revokes its access token): each
    deleted access token fires ``post_delete``, whose receiver broadcasts its eviction from
    every process's token cache after commit, so none is trusted from memory any longer.
    """
    revoked = 0
    refresh_tokens = RefreshToken.objects.filter(user_id=user_id, revoked__isnull=True).select_related("access_token")
    for refresh in refresh_tokens:
        access = refresh.access_token
        if _names_tenant(refresh.resource, tenant) or (access is not None and _names_tenant(access.resource, tenant)):
            revoked += access is not None
            refresh.revoke()
    for access in AccessToken.objects.filter(user_id=user_id):
        if _names_tenant(access.resource, tenant):
            revoked += 1
            access.revoke()
    return revoked


# --- tenants (the operator API) -------------------------------------------------------------


class TenantRefused(McpsiteError):
    """A tenant change that is not made; the message says why."""


def _check_toolsets(toolsets: list[str]) -> list[str]:
    known = toolsets_known()
    unknown = sorted(set(toolsets) - set(known))
    if unknown:
        raise TenantRefused(f"Unknown toolsets: {', '.join(unknown)}. Known: {', '.join(sorted(known))}.")
    return list(dict.fromkeys(toolsets))


@transaction.atomic
def tenant_create(*, slug: str, name: str, toolsets: list[str], public: bool = False, enabled: bool = True) -> Tenant:
    """A new tenant, served by every process once its ``tenants.changed`` broadcast arrives."""
    if Tenant.objects.filter(slug=slug).exists():
        raise TenantRefused(f"A tenant {slug!r} exists already.")
    tenant = Tenant(slug=slug, name=name, toolsets=_check_toolsets(toolsets), public=public, enabled=enabled)
    try:
        tenant.full_clean()
    except ValidationError as invalid:
        raise TenantRefused("; ".join(f"{k}: {' '.join(v)}" for k, v in invalid.message_dict.items())) from None
    tenant.save()
    return tenant


_UNCHANGED: Any = object()  # a quota left out of an update (None is a value: "the site's default")


@transaction.atomic
def tenant_update(
    *,
    tenant: Tenant,
    enabled: bool | None = None,
    toolsets: list[str] | None = None,
    call_quota: int | None = _UNCHANGED,
    call_quota_per_person: int | None = _UNCHANGED,
) -> Tenant:
    """Enable or disable a tenant (a disabled one answers as an unknown tenant does), set its
    toolsets, or its call quotas (None: the site's default again; 0: no limit)."""
    tenant = Tenant.objects.select_for_update().get(pk=tenant.pk)
    if enabled is not None:
        tenant.enabled = enabled
    if toolsets is not None:
        tenant.toolsets = _check_toolsets(toolsets)
    if call_quota is not _UNCHANGED:
        tenant.call_quota = call_quota
    if call_quota_per_person is not _UNCHANGED:
        tenant.call_quota_per_person = call_quota_per_person
    tenant.save(update_fields=["enabled", "toolsets", "call_quota", "call_quota_per_person", "updated_at"])
    return tenant


@transaction.atomic
def tenant_member_add(*, tenant: Tenant, user: AbstractBaseUser) -> None:
    if not user.is_active:
        raise TenantRefused(f"{user.get_username()} is not an active user.")
    tenant.members.add(user.pk)


@transaction.atomic
def tenant_member_remove(*, tenant: Tenant, user: AbstractBaseUser) -> None:
    """Through the relation, so ``m2m_changed`` revokes the member's tokens for the tenant
    (`token_revoke_for_member`) and every process stops trusting them."""
    tenant.members.remove(user.pk)


# --- member roles (the admin and the operator API) -------------------------------------------


def _checked(row: Role | MemberRole) -> None:
    try:
        row.full_clean(validate_constraints=False)  # the unique constraints: the callers' checks say which
    except ValidationError as invalid:
        raise TenantRefused("; ".join(f"{k}: {' '.join(v)}" for k, v in invalid.message_dict.items())) from None


@transaction.atomic
def role_create(*, tenant: Tenant, name: str, tools: list[str], toolsets: list[str]) -> Role:
    """A role at `tenant` naming tools and toolsets it serves."""
    if Role.objects.filter(tenant=tenant, name=name).exists():
        raise TenantRefused(f"{tenant.slug} has a role {name!r} already.")
    role = Role(tenant=tenant, name=name, tools=tools, toolsets=toolsets)
    _checked(role)
    role.save()
    return role


@transaction.atomic
def role_update(
    *, role: Role, name: str | None = None, tools: list[str] | None = None, toolsets: list[str] | None = None
) -> Role:
    """Rename a role or replace what it may call; its holders' next calls see the change in every
    process (their cached tokens are forgotten: `mcpsite.signals.role_changed`)."""
    role = Role.objects.select_for_update().select_related("tenant").get(pk=role.pk)
    if name is not None and name != role.name:
        if Role.objects.filter(tenant_id=role.tenant_id, name=name).exists():
            raise TenantRefused(f"{role.tenant.slug} has a role {name!r} already.")
        role.name = name
    if tools is not None:
        role.tools = tools
    if toolsets is not None:
        role.toolsets = toolsets
    _checked(role)
    role.save()
    return role


@transaction.atomic
def role_delete(*, role: Role) -> None:
    """Delete a role nobody holds: a held one is refused, its holders would silently regain every tool."""
    holders = MemberRole.objects.filter(role=role).count()
    if holders:
        raise TenantRefused(
            f"The role {role.name!r} is held by {holders} member(s): give them another role (or none) first."
        )
    try:
        role.delete()
    except RestrictedError:  # given to someone since the count: the same refusal
        raise TenantRefused(f"The role {role.name!r} is held by a member: give them another role first.") from None


@transaction.atomic
def member_role_set(*, tenant: Tenant, user: AbstractBaseUser, role: Role | None) -> MemberRole | None:
    """Give a member of `tenant` one of its roles, or none (None: every tool again). Their next call
    in every process sees it (`mcpsite.signals.member_role_changed`)."""
    if not tenant.members.filter(pk=user.pk).exists():
        raise TenantMembershipRequired(tenant=tenant, user=user)
    if role is None:
        MemberRole.objects.filter(tenant=tenant, user_id=user.pk).delete()
        return None
    held = MemberRole.objects.select_for_update().filter(tenant=tenant, user_id=user.pk).first()
    held = held or MemberRole(tenant=tenant, user_id=user.pk)
    held.role = role
    _checked(held)
    held.save()
    return held


def dcr_clients_purge(*, now: datetime | None = None) -> int:
    """Delete dynamically registered clients nobody uses: registered ``DCR_UNUSED_KEEP_SECONDS``
    ago, holding nothing live, and given no token or grant for as long. Anyone may register one
    (DCR is open), and DOT keeps them forever. Clients staff create (``manual``) are never
    touched; CIMD clients are DOT's `clearcimdapplications`. Returns how many were deleted.

    1. Page through the candidates by primary key, ``DCR_PURGE_BATCH_SIZE`` at a time, at most
       ``DCR_PURGE_BATCHES_PER_RUN`` pages a run (the rest waits for the next run).
    2. Each page is one transaction: lock the rows still candidates, drop those with a token or
       grant that is live or recent, delete the rest. A token issued meanwhile takes a share lock
       on its client row (the foreign key), so it is either seen here or waits for the delete.
    """
    conf = mcpsite_settings()
    now = now or timezone.now()
    cutoff = now - timedelta(seconds=conf["DCR_UNUSED_KEEP_SECONDS"])
    refresh_seconds = oauth2_settings.REFRESH_TOKEN_EXPIRE_SECONDS
    usable_refresh = Q(revoked__isnull=True)
    if refresh_seconds:
        usable_refresh &= Q(created__gt=now - timedelta(seconds=refresh_seconds))
    candidates = Application.objects.filter(
        registration_source=Application.RegistrationSource.DCR, created__lt=cutoff
    ).order_by("pk")
    in_use = (
        (AccessToken, Q(expires__gt=now) | Q(created__gte=cutoff)),
        (Grant, Q(expires__gt=now) | Q(created__gte=cutoff)),
        (IDToken, Q(expires__gt=now) | Q(created__gte=cutoff)),
        (RefreshToken, usable_refresh | Q(created__gte=cutoff)),
    )
    deleted = 0
    after = 0
    for _ in range(conf["DCR_PURGE_BATCHES_PER_RUN"]):
        page = list(candidates.filter(pk__gt=after).values_list("pk", flat=True)[: conf["DCR_PURGE_BATCH_SIZE"]])
        if not page:
            break
        after = page[-1]
        with transaction.atomic():
            locked = set(candidates.filter(pk__in=page).select_for_update().values_list("pk", flat=True))
            used: set[int] = set()
            for model, live in in_use:
                used.update(
                    model.objects.filter(live, application_id__in=locked).values_list("application_id", flat=True)
                )
            deleted += (
                Application.objects.filter(pk__in=locked - used).delete()[1].get("oauth2_provider.Application", 0)
            )
    if deleted:
        logger.info("%d unused dynamically registered client(s) deleted", deleted)
    return deleted
