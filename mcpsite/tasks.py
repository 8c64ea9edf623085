from __future__ import annotations

from celery import shared_task
from django.utils import timezone
from oauth2_provider.models import clear_expired

from mcpsite.models import ConsumedRequestState


@shared_task
def tokens_clear_expired() -> None:
    """django-oauth-toolkit's own clean-up of expired tokens and grants."""
    clear_expired()


@shared_task
def request_states_purge() -> int:
    """Forget consumed requestStates that have expired (the codec refuses them by now anyway)."""
    deleted, _ = ConsumedRequestState.objects.filter(expires_at__lt=timezone.now()).delete()
    return deleted
