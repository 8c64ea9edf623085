from __future__ import annotations

from datetime import timedelta

from celery import shared_task
from django.utils import timezone
from oauth2_provider.models import clear_expired

from mcpsite.models import ConsumedRequestState, ProcessHeartbeat


@shared_task
def tokens_clear_expired() -> None:
    """django-oauth-toolkit's own clean-up of expired tokens and grants."""
    clear_expired()


@shared_task
def request_states_purge() -> int:
    """Forget consumed requestStates that have expired (the codec refuses them by now anyway)."""
    deleted, _ = ConsumedRequestState.objects.filter(expires_at__lt=timezone.now()).delete()
    return deleted


@shared_task
def heartbeats_purge() -> int:
    """Forget processes that stopped reporting a day ago (killed, not shut down)."""
    deleted, _ = ProcessHeartbeat.objects.filter(seen_at__lt=timezone.now() - timedelta(days=1)).delete()
    return deleted
