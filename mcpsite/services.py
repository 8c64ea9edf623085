"""Workflows over several rows: the key ring and bearer tokens. Admin, commands and tests call these."""

from __future__ import annotations

import secrets
from datetime import timedelta

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone
from oauth2_provider.models import AccessToken, Application

from mcpsite.keyring import new_key_material, seal_material
from mcpsite.models import RequestStateKey, Tenant

SCRIPT_CLIENT_NAME = "mcpsite scripts"


class TenantMembershipRequired(Exception):
    def __init__(self, *, tenant: Tenant, user: AbstractBaseUser) -> None:
        super().__init__(f"{user} is not a member of tenant {tenant.slug}")
        self.tenant = tenant
        self.user = user


@transaction.atomic
def keyring_add_key() -> RequestStateKey:
    """Generate a key server-side; it starts as verifying, so every process can learn it before it mints."""
    kid, material = new_key_material()
    while RequestStateKey.objects.filter(kid=kid).exists():
        kid, material = new_key_material()
    return RequestStateKey.objects.create(kid=kid, material=seal_material(kid, material))


@transaction.atomic
def keyring_promote(*, key: RequestStateKey) -> RequestStateKey:
    """Make `key` the minting key; the previous minting key keeps verifying."""
    now = timezone.now()
    key = RequestStateKey.objects.select_for_update().get(pk=key.pk)
    if key.phase == RequestStateKey.Phase.RETIRED:
        raise ValueError(f"key {key.kid} is retired and cannot mint again")
    if key.phase == RequestStateKey.Phase.MINTING:
        return key
    RequestStateKey.objects.filter(phase=RequestStateKey.Phase.MINTING).update(
        phase=RequestStateKey.Phase.VERIFYING, minting_until=now
    )
    key.phase = RequestStateKey.Phase.MINTING
    key.minting_since = now
    key.save(update_fields=["phase", "minting_since"])
    return key


@transaction.atomic
def keyring_retire(*, key: RequestStateKey) -> RequestStateKey:
    key = RequestStateKey.objects.select_for_update().get(pk=key.pk)
    if key.phase == RequestStateKey.Phase.MINTING:
        raise ValueError(f"key {key.kid} is minting; promote another key first")
    key.phase = RequestStateKey.Phase.RETIRED
    key.retired_at = timezone.now()
    key.save(update_fields=["phase", "retired_at"])
    return key


@transaction.atomic
def keyring_ensure_minting() -> RequestStateKey:
    """Bootstrap: a minting key, creating and promoting one if the ring has none."""
    existing = RequestStateKey.objects.filter(phase=RequestStateKey.Phase.MINTING).first()
    if existing is not None:
        return existing
    return keyring_promote(key=keyring_add_key())


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
    scope: str = "mcp",
    expires_in: timedelta | None = None,
    site_root: str | None = None,
    resource: list[str] | None = None,
) -> AccessToken:
    """A bearer token for `user` at `tenant`'s MCP endpoint (RFC 8707: bound to its resource URL)."""
    if not tenant.members.filter(pk=user.pk).exists():
        raise TenantMembershipRequired(tenant=tenant, user=user)
    lifetime = expires_in or timedelta(seconds=settings.ACCESS_TOKEN_SECONDS)
    return AccessToken.objects.create(
        user=user,
        application=application or script_application(),
        token=secrets.token_urlsafe(32),
        expires=timezone.now() + lifetime,
        scope=scope,
        resource=[tenant.resource_url(site_root)] if resource is None else resource,
    )
