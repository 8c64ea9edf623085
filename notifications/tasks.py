"""Sending, with nobody waiting (beat schedule in settings: ``notifications-send-due``)."""

from __future__ import annotations

from celery import shared_task

from notifications import services
from notifications.conf import notifications_settings


@shared_task
def deliveries_send(ids: list[str]) -> int:
    """Send these just-recorded deliveries now, if due and their endpoints have room (a worker, after commit)."""
    return services.deliveries_send(ids=ids)


@shared_task
def notifications_send_due() -> int:
    """Send whatever is due, in bounded batches, for at most one beat interval: new events the
    worker did not take, and retries."""
    return services.deliveries_send_due(within_seconds=notifications_settings()["SEND_EVERY_SECONDS"])
