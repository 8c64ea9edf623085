"""Workflows over several rows: the key ring and bearer tokens. Admin, commands and tests call these."""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta
from urllib.parse import urlsplit

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone
from oauth2_provider.models import AccessToken, Application, RefreshToken

from mcpsite import signals
from mcpsite.conf import mcpsite_settings
from mcpsite.keyring import new_key_material, seal_material
from mcpsite.models import KeyRingEvent, ProcessHeartbeat, RequestStateKey, Tenant

SCRIPT_CLIENT_NAME = "mcpsite scripts"


class TenantMembershipRequired(Exception):
    def __init__(self, *, tenant: Tenant, user: AbstractBaseUser) -> None:
        super().__init__(f"{user} is not a member of tenant {tenant.slug}")
        self.tenant = tenant
        self.user = user


class KeyRingRefused(Exception):
    """A rotation step that would break rounds in flight; the message says why and how long to wait."""

    def __init__(self, message: str, *, wait_seconds: float | None = None) -> None:
        super().__init__(message)
        self.wait_seconds = wait_seconds


def keyring_propagation_bound() -> float:
    """How long a ring change may take to reach every process: a broadcast, or at worst the next
    poll (which also refreshes the process's heartbeat)."""
    return 2 * mcpsite_settings()["POLL_SECONDS"]


def heartbeat_live_within() -> float:
    return 3 * mcpsite_settings()["POLL_SECONDS"]


@dataclass(frozen=True)
class Rollout:
    """How many live processes have loaded a ring that contains a key."""

    live: int
    loaded: int

    @property
    def complete(self) -> bool:
        return self.live > 0 and self.loaded == self.live


def keyring_rollout(*, kid: str) -> Rollout:
    live = list(ProcessHeartbeat.objects.live(within=heartbeat_live_within()).values_list("ring_kids", flat=True))
    return Rollout(live=len(live), loaded=sum(1 for kids in live if kid in kids))


def _audit(
    action: str, key: RequestStateKey, actor: AbstractBaseUser | None, note: str = "", oauth_client: str = ""
) -> None:
    actor_id = actor.pk if actor is not None and actor.is_authenticated else None
    event = KeyRingEvent.objects.create(
        action=action, kid=key.kid, actor_id=actor_id, note=note, oauth_client=oauth_client
    )
    signals.keyring_changed.send(sender=KeyRingEvent, event=event)


@transaction.atomic
def keyring_add_key(*, actor: AbstractBaseUser | None = None, oauth_client: str = "") -> RequestStateKey:
    """Generate a key server-side; it starts as verifying, so every process can learn it before it mints.

    `oauth_client` (here and below): the operator API client the step came through, audited."""
    kid, material = new_key_material()
    while RequestStateKey.objects.filter(kid=kid).exists():
        kid, material = new_key_material()
    key = RequestStateKey.objects.create(kid=kid, material=seal_material(kid, material))
    _audit(KeyRingEvent.Action.ADDED, key, actor, oauth_client=oauth_client)
    return key


@transaction.atomic
def keyring_promote(
    *,
    key: RequestStateKey,
    actor: AbstractBaseUser | None = None,
    check_rollout: bool = True,
    oauth_client: str = "",
) -> RequestStateKey:
    """Make `key` the minting key; the previous minting key keeps verifying.

    Refused until every live process has loaded a ring containing `key` (so no process is handed
    state it cannot open); when no process reports, until the propagation bound has passed since
    the key was added.
    """
    now = timezone.now()
    key = RequestStateKey.objects.select_for_update().get(pk=key.pk)
    if key.phase == RequestStateKey.Phase.RETIRED:
        raise KeyRingRefused(f"Key {key.kid} is retired and cannot mint again.")
    if key.phase == RequestStateKey.Phase.MINTING:
        return key
    if check_rollout:
        _check_promotable(key, now)
    previous = list(RequestStateKey.objects.select_for_update().filter(phase=RequestStateKey.Phase.MINTING))
    RequestStateKey.objects.filter(pk__in=[p.pk for p in previous]).update(
        phase=RequestStateKey.Phase.VERIFYING, minting_until=now
    )
    key.phase = RequestStateKey.Phase.MINTING
    key.minting_since = now
    key.save(update_fields=["phase", "minting_since"])
    replaced = f"; {previous[0].kid} keeps verifying" if previous else ""
    _audit(KeyRingEvent.Action.PROMOTED, key, actor, f"now minting{replaced}", oauth_client)
    return key


def _check_promotable(key: RequestStateKey, now: datetime) -> None:
    bound = keyring_propagation_bound()
    rollout = keyring_rollout(kid=key.kid)
    if rollout.live:
        if not rollout.complete:
            raise KeyRingRefused(
                f"Only {rollout.loaded} of {rollout.live} live processes have loaded key {key.kid}; "
                f"they reload within {bound:.0f} s. Try again then.",
                wait_seconds=bound,
            )
        return
    waited = (now - key.created_at).total_seconds()
    if waited < bound:
        raise KeyRingRefused(
            f"No process reports its key ring, so wait until every process has surely loaded key {key.kid}: "
            f"{bound - waited:.0f} s more.",
            wait_seconds=bound - waited,
        )


@transaction.atomic
def keyring_retire(
    *,
    key: RequestStateKey,
    actor: AbstractBaseUser | None = None,
    now_override: bool = False,
    oauth_client: str = "",
) -> RequestStateKey:
    """Stop verifying state sealed with `key`.

    Refused while it mints, and until one requestState TTL plus the propagation bound has passed
    since it stopped minting (state it sealed may still be in flight). `now_override` is for a
    compromised key: every round in flight that was sealed with it then fails with -32602.
    """
    now = timezone.now()
    key = RequestStateKey.objects.select_for_update().get(pk=key.pk)
    if key.phase == RequestStateKey.Phase.RETIRED:
        return key
    if key.phase == RequestStateKey.Phase.MINTING:
        raise KeyRingRefused(f"Key {key.kid} is minting; promote another key first.")
    note = ""
    if key.minting_until is not None:
        safe_at = key.minting_until + timedelta(
            seconds=mcpsite_settings()["REQUEST_STATE_TTL"] + keyring_propagation_bound()
        )
        if now < safe_at and not now_override:
            wait = (safe_at - now).total_seconds()
            raise KeyRingRefused(
                f"State sealed with key {key.kid} may still be in flight until {safe_at:%H:%M:%S} UTC; "
                f"retire it in {wait:.0f} s (or use 'retire now' if the key is compromised).",
                wait_seconds=wait,
            )
        if now < safe_at:
            note = f"override: rounds sealed with it before {key.minting_until:%H:%M:%S} UTC now fail with -32602"
    key.phase = RequestStateKey.Phase.RETIRED
    key.retired_at = now
    key.save(update_fields=["phase", "retired_at"])
    action = KeyRingEvent.Action.RETIRED_NOW if now_override else KeyRingEvent.Action.RETIRED
    _audit(action, key, actor, note, oauth_client)
    return key


@transaction.atomic
def keyring_ensure_minting() -> RequestStateKey:
    """Bootstrap: a minting key, creating and promoting one if the ring has none (nothing is in flight)."""
    existing = RequestStateKey.objects.filter(phase=RequestStateKey.Phase.MINTING).first()
    if existing is not None:
        return existing
    return keyring_promote(key=keyring_add_key(), check_rollout=False)


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


class TenantRefused(Exception):
    """A tenant change that is not made; the message says why."""


def _check_toolsets(toolsets: list[str]) -> list[str]:
    from tools_app.discovery import toolsets as known

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


@transaction.atomic
def tenant_update(*, tenant: Tenant, enabled: bool | None = None, toolsets: list[str] | None = None) -> Tenant:
    """Enable or disable a tenant (disabled answers 404), or set its toolsets."""
    tenant = Tenant.objects.select_for_update().get(pk=tenant.pk)
    if enabled is not None:
        tenant.enabled = enabled
    if toolsets is not None:
        tenant.toolsets = _check_toolsets(toolsets)
    tenant.save(update_fields=["enabled", "toolsets", "updated_at"])
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
