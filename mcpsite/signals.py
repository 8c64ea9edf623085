"""Tell every process when the rows its in-memory caches mirror have changed."""

from __future__ import annotations

from typing import Any

from django.db.models.signals import post_delete, post_save
from django.dispatch import receiver
from oauth2_provider.models import AccessToken

from mcpsite.events import publish_on_commit
from mcpsite.models import RequestStateKey, Tenant


@receiver([post_save, post_delete], sender=Tenant)
def tenant_changed(**_: Any) -> None:
    publish_on_commit({"type": "tenants.changed"})


@receiver([post_save, post_delete], sender=RequestStateKey)
def keyring_changed(**_: Any) -> None:
    publish_on_commit({"type": "keyring.changed"})


@receiver([post_save, post_delete], sender=AccessToken)
def token_changed(instance: AccessToken, created: bool = False, **_: Any) -> None:
    if not created:  # a new token is in no cache yet
        publish_on_commit({"type": "token.changed", "checksum": instance.token_checksum})
