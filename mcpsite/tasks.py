from __future__ import annotations

from datetime import timedelta

from celery import shared_task
from django.core.management import call_command
from django.utils import timezone
from oauth2_provider.models import clear_expired

from mcpsite import services
from mcpsite.models import ConsumedRequestState, ProcessHeartbeat


@shared_task
def tokens_clear_expired() -> None:
    """django-oauth-toolkit's own clean-ups: expired tokens and grants, then the clients it created
    from Client ID Metadata Documents that have expired and hold nothing live (anyone may make one
    by naming a document, so they would otherwise pile up; DOT re-creates one on its next use)."""
    clear_expired()
    call_command("clearcimdapplications", verbosity=0)


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


@shared_task
def dcr_clients_purge() -> int:
    """Delete dynamically registered clients past retention that nobody uses (bounded per run)."""
    return services.dcr_clients_purge()
