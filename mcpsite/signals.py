"""Tell every process when the rows its in-memory caches mirror have changed; and the signals
other apps may listen to (nothing here imports its listeners)."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.db.models.signals import m2m_changed, post_delete, post_save, pre_save
from django.dispatch import Signal, receiver
from oauth2_provider.models import AccessToken

from mcpsite import services
from mcpsite.broadcast import publish_on_commit
from mcpsite.models import MemberRole, RequestStateKey, Role, Tenant

# A key-ring step (a key added, promoted, retired) was taken. Arguments: ``event`` (the
# KeyRingEvent audit row). Sent inside the step's transaction, like `approvals.signals`: a
# receiver writing rows commits with the step, a side effect waits for ``transaction.on_commit``.
keyring_changed = Signal()


@receiver([post_save, post_delete], sender=Tenant)
def tenant_changed(instance: Tenant, **_: Any) -> None:
    # Named, so each process re-reads only this tenant (and finds it by id if its slug changed).
    publish_on_commit({"type": "tenants.changed", "slug": instance.slug, "id": instance.pk})


@receiver([post_save, post_delete], sender=RequestStateKey)
def keyring_rows_changed(**_: Any) -> None:
    publish_on_commit({"type": "keyring.changed"})


@receiver([post_save, post_delete], sender=AccessToken)
def token_changed(instance: AccessToken, created: bool = False, **_: Any) -> None:
    if not created:  # a new token is in no cache yet
        publish_on_commit({"type": "token.changed", "checksum": instance.token_checksum})


@receiver(m2m_changed, sender=Tenant.members.through)
def membership_changed(instance: Any, action: str, reverse: bool, pk_set: set[int] | None = None, **_: Any) -> None:
    """A member removed (from either side of the relation, or by ``clear()``) loses the tenant's tokens."""
    pairs: list[tuple[int, Tenant]]
    if action == "pre_clear":  # pk_set is not given for a clear: read who is about to go
        pairs = (
            [(user_id, instance) for user_id in instance.members.values_list("pk", flat=True)]
            if not reverse
            else [(instance.pk, tenant) for tenant in instance.tenants.all()]
        )
    elif action == "post_remove":
        if not reverse:
            pairs = [(user_id, instance) for user_id in pk_set or ()]
        else:
            pairs = [(instance.pk, tenant) for tenant in Tenant.objects.filter(pk__in=pk_set or ())]
    else:
        return
    for user_id, tenant in pairs:
        services.token_revoke_for_member(user_id=user_id, tenant=tenant)
        # Their role went with the membership: a member added again starts with none.
        MemberRole.objects.filter(tenant=tenant, user_id=user_id).delete()


def _members_changed(user_ids: set[int], tenant_id: int) -> None:
    """Every process forgets these users' cached tokens, so their next call reads their roles again
    (a lost event: within TOKEN_CACHE_SECONDS, the cache's own bound), and tells the tenant's
    listening clients that its lists changed (what these members see did)."""
    if user_ids:
        subjects = sorted(str(user_id) for user_id in user_ids)
        publish_on_commit({"type": "members.changed", "subjects": subjects, "tenant": tenant_id})


@receiver([post_save, post_delete], sender=Role)
def role_changed(instance: Role, **_: Any) -> None:
    holders = MemberRole.objects.filter(role_id=instance.pk).values_list("user_id", flat=True)
    _members_changed(set(holders), instance.tenant_id)


@receiver(pre_save, sender=MemberRole)
def member_role_moving(instance: MemberRole, **_: Any) -> None:
    # A row moved to another user (the admin allows it) changes the role of the user it leaves too.
    if instance.pk is not None:
        before = MemberRole.objects.filter(pk=instance.pk).values_list("user_id", flat=True).first()
        if before is not None and before != instance.user_id:
            _members_changed({before}, instance.tenant_id)


@receiver([post_save, post_delete], sender=MemberRole)
def member_role_changed(instance: MemberRole, **_: Any) -> None:
    _members_changed({instance.user_id}, instance.tenant_id)


@receiver(post_save, sender=get_user_model())
def user_saved(instance: AbstractBaseUser, update_fields: frozenset[str] | None = None, **_: Any) -> None:
    """A deactivated user's tokens are revoked (a save that did not write ``is_active`` is skipped)."""
    if not instance.is_active and (update_fields is None or "is_active" in update_fields):
        services.token_revoke_for_member(user_id=instance.pk)
