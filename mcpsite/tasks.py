from __future__ import annotations

from celery import shared_task
from oauth2_provider.models import clear_expired


@shared_task
def tokens_clear_expired() -> None:
    """django-oauth-toolkit's own clean-up of expired tokens and grants."""
    clear_expired()
