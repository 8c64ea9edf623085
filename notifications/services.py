"""Workflows over endpoints and deliveries. Receivers, the admin and the Celery tasks call these.

An event is recorded as one delivery row per subscribed endpoint, in the transaction of the
change it reports. Sending is never done by the caller: after commit, a Celery worker is asked
to send at once when there is a broker; the beat's `deliveries_send_due` sends everything due
(new rows on the embedded default, where eager Celery would post on the request's thread, and
every retry everywhere).
"""

from __future__ import annotations

import logging
import random
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from typing import Any

from celery import current_app
from django.conf import settings
from django.db import transaction
from django.db.models import F, Window
from django.db.models.functions import RowNumber
from django.utils import timezone

from mcpsite import metrics
from notifications.addresses import check_url
from notifications.conf import notifications_settings
from notifications.models import TEST_EVENT, Attempt, Delivery, Endpoint
from notifications.sending import Outcome, post

logger = logging.getLogger(__name__)

# A claim outlives the attempt's own timeouts (connect, send, read) by this much.
LEASE_MARGIN_SECONDS = 10.0


def retry_delay(attempts: int) -> float | None:
    """Seconds until the next attempt after `attempts` failed ones; None when none is left.
    Exponential, with jitter (50-100 % of the step) so receivers that come back are not hit by
    every sender at once."""
    conf = notifications_settings()
    if attempts >= conf["MAX_ATTEMPTS"]:
        return None
    step = min(conf["BACKOFF_MAX_SECONDS"], conf["BACKOFF_BASE_SECONDS"] * 2 ** (attempts - 1))
    return step * random.uniform(0.5, 1.0)


# --- endpoints ------------------------------------------------------------------------------


@transaction.atomic
def endpoint_create(
    *, url: str, event_types: list[str], tenant: Any = None, description: str = "", enabled: bool = True
) -> Endpoint:
    """A new endpoint with a server-generated secret (the caller shows it once). Raises `EndpointRefused`."""
    check_url(url)
    return Endpoint.objects.create(
        url=url, event_types=list(event_types), tenant=tenant, description=description, enabled=enabled
    )


@transaction.atomic
def endpoint_rotate_secret(*, endpoint: Endpoint) -> str:
    """A new secret for `endpoint`, returned once; every later attempt is signed with it."""
    endpoint = Endpoint.objects.select_for_update().get(pk=endpoint.pk)
    secret = endpoint.rotate_secret()
    endpoint.save(update_fields=["secret", "secret_rotated_at"])
    return secret


@transaction.atomic
def endpoint_delete(*, endpoint: Endpoint) -> None:
    """Delete `endpoint` with its deliveries and attempts. Its deliveries are locked first, so a
    sender recording an attempt meanwhile either finishes before the rows are collected or finds
    its delivery gone (Django's cascade is not the database's: an attempt inserted between its
    collecting and its deleting would break the delete)."""
    list(Delivery.objects.select_for_update().filter(endpoint_id=endpoint.pk).values_list("pk", flat=True))
    endpoint.delete()


# --- recording ------------------------------------------------------------------------------


def _payload(event_type: str, data: dict[str, Any]) -> dict[str, Any]:
    return {"type": event_type, "timestamp": timezone.now().isoformat(), "data": data}


def _record(endpoints: list[Endpoint], event_type: str, data: dict[str, Any]) -> list[Delivery]:
    payload = _payload(event_type, data)
    rows = Delivery.objects.bulk_create(Delivery(endpoint=e, event_type=event_type, payload=payload) for e in endpoints)
    ids = [row.pk for row in rows]
    transaction.on_commit(lambda: _dispatch(ids))
    return rows


@transaction.atomic
def event_record(
    *, event_type: str, tenant_id: int | None, data: dict[str, Any], endpoints: list[Endpoint] | None = None
) -> list[Delivery]:
    """One delivery per endpoint subscribed to `event_type` for `tenant_id` (None: site-wide);
    `endpoints`: the subscribers, when the caller already looked them up."""
    if endpoints is None:
        endpoints = Endpoint.objects.subscribed(event_type=event_type, tenant_id=tenant_id)
    return _record(endpoints, event_type, data) if endpoints else []


@transaction.atomic
def endpoint_send_test(*, endpoint: Endpoint, user: Any = None) -> Delivery:
    """A ``notification.test`` event for `endpoint` alone, whatever it subscribes to."""
    by = getattr(user, "get_username", lambda: "")()
    data = {"endpoint": endpoint.pk, "tenant": endpoint.tenant.slug if endpoint.tenant is not None else None, "by": by}
    return _record([endpoint], TEST_EVENT, data)[0]


def _dispatch(ids: list[str]) -> None:
    """With a broker, ask a worker to send now; on the embedded default, leave it to the beat
    (eager Celery would post right here, on the thread of the request that made the change)."""
    if settings.CELERY_TASK_ALWAYS_EAGER:
        return
    try:
        # No publish retries: a broker outage must not hold the response; the beat sends them.
        current_app.send_task("notifications.tasks.deliveries_send", args=[ids], retry=False)
    except Exception:
        logger.warning("could not queue %d notification(s); the beat sends them", len(ids), exc_info=True)


# --- sending --------------------------------------------------------------------------------


def _in_turn(due: Any, *, per_endpoint: int, limit: int) -> list[str]:
    """Up to `limit` due delivery ids with tenants taking turns: every tenant's oldest first, then
    every tenant's second, and so on (site-wide events are one more "tenant"). No endpoint gets
    more than `per_endpoint` of them, the most it could have in flight. So a tenant with 300 due
    deliveries to one receiver fills four places of a batch, and another tenant's one is in the
    next batch whatever its age, not behind the other's whole backlog."""
    oldest_first = [F("next_attempt_at").asc(), F("pk").asc()]
    heads = due.annotate(place=Window(RowNumber(), partition_by=[F("endpoint_id")], order_by=oldest_first)).filter(
        place__lte=per_endpoint
    )
    turns = (
        Delivery.objects.filter(pk__in=heads.values("pk"))
        .annotate(turn=Window(RowNumber(), partition_by=[F("endpoint__tenant_id")], order_by=oldest_first))
        .order_by("turn", "next_attempt_at", "pk")
        .values_list("pk", flat=True)
    )
    return list(turns[:limit])


@transaction.atomic
def _claim(*, now: datetime, limit: int, ids: list[str] | None = None) -> list[Delivery]:
    """Lease up to `limit` due deliveries, tenants taking turns (`_in_turn`), at most
    ``MAX_IN_FLIGHT_PER_ENDPOINT`` per endpoint counting those other senders hold.

    1. Pick the due rows in turn, then lock them, skipping rows another sender is claiming (SKIP LOCKED).
    2. Lock their endpoints (in pk order), so two senders count one endpoint's flights in turn.
    3. Keep rows while their endpoint is under its cap; lease them past the attempt's timeout.
    """
    conf = notifications_settings()
    due = Delivery.objects.due(now)
    if ids is not None:
        due = due.filter(pk__in=ids)
    picked = _in_turn(due, per_endpoint=conf["MAX_IN_FLIGHT_PER_ENDPOINT"], limit=limit)
    if not picked:
        return []
    # Locked rows are re-checked as due: another sender may have leased one since it was picked.
    locked = {
        row.pk: row for row in Delivery.objects.due(now).filter(pk__in=picked).select_for_update(skip_locked=True)
    }
    rows = [locked[pk] for pk in picked if pk in locked]
    if not rows:
        return []
    endpoint_ids = sorted({row.endpoint_id for row in rows})
    list(Endpoint.objects.select_for_update().filter(pk__in=endpoint_ids).order_by("pk").values_list("pk"))
    flying = Delivery.objects.in_flight_per_endpoint(endpoint_ids, now)
    claimed: list[Delivery] = []
    for row in rows:
        if flying[row.endpoint_id] < conf["MAX_IN_FLIGHT_PER_ENDPOINT"]:
            flying[row.endpoint_id] += 1
            claimed.append(row)
    lease = now + timedelta(seconds=3 * conf["TIMEOUT_SECONDS"] + LEASE_MARGIN_SECONDS)
    Delivery.objects.filter(pk__in=[row.pk for row in claimed]).update(locked_until=lease)
    return list(Delivery.objects.filter(pk__in=[row.pk for row in claimed]).select_related("endpoint"))


@transaction.atomic
def _finish(*, delivery_id: str, outcome: Outcome) -> Delivery | None:
    row = Delivery.objects.select_for_update().filter(pk=delivery_id).first()
    if row is None:
        return None  # its endpoint was deleted while the post was in flight
    Attempt.objects.create(
        delivery=row,
        started_at=outcome.started_at,
        duration_seconds=outcome.duration_seconds,
        status_code=outcome.status_code,
        response_excerpt=outcome.response_excerpt,
        error=outcome.error,
    )
    if row.status == Delivery.Status.PENDING:  # else staff or another sender settled it meanwhile
        row.attempted(ok=outcome.ok, at=timezone.now(), retry_in=None if outcome.ok else retry_delay(row.attempts + 1))
        row.save(update_fields=["attempts", "status", "next_attempt_at", "locked_until", "delivered_at"])
    if row.status == Delivery.Status.FAILED:
        logger.warning("notification %s to %s failed after %d attempts", row.pk, row.endpoint_id, row.attempts)
    return row


def deliveries_send(*, ids: list[str] | None = None, now: datetime | None = None) -> int:
    """Send one batch of due deliveries (all due ones, or those of `ids` that are due); returns how many.

    The posts run in parallel, one thread each (no ORM there), so one tick lasts about one
    attempt's timeout however many receivers hang, and a tenant's delivery never waits behind
    another's hanging receiver; results are recorded one row at a time.
    """
    conf = notifications_settings()
    rows = _claim(now=now or timezone.now(), limit=conf["BATCH_SIZE"], ids=ids)
    if not rows:
        return 0
    with ThreadPoolExecutor(max_workers=len(rows), thread_name_prefix="mcpsite-notify") as pool:
        futures = {
            row.pk: pool.submit(
                post,
                url=row.endpoint.url,
                secret=row.endpoint.secret,
                msg_id=row.pk,
                payload=row.payload,
                timeout=conf["TIMEOUT_SECONDS"],
            )
            for row in rows
        }
        for delivery_id, future in futures.items():
            try:
                outcome = future.result()
            except Exception as exc:  # a bug in posting must still count as an attempt
                outcome = Outcome(datetime.now(UTC), 0.0, error=f"{type(exc).__name__}: {exc}"[:300])
            metrics.count_notification_attempt(status_code=outcome.status_code)
            _finish(delivery_id=delivery_id, outcome=outcome)
    return len(rows)


def deliveries_send_due(*, within_seconds: float) -> int:
    """Send batches of due deliveries one after another until none is due or `within_seconds`
    have passed (a batch started in time is finished); returns how many. One batch a tick let a
    healthy receiver with a backlog get four posts a tick (its in-flight cap): 0.8 a second."""
    deadline = time.monotonic() + within_seconds
    sent = 0
    while batch := deliveries_send():
        sent += batch
        if time.monotonic() >= deadline:
            break
    return sent


@transaction.atomic
def delivery_retry_now(*, delivery: Delivery) -> Delivery:
    """Staff: one more attempt for a failed delivery, at the next send. Raises ValueError if not failed."""
    row = Delivery.objects.select_for_update().get(pk=delivery.pk)
    row.retry_now()
    row.save(update_fields=["status", "next_attempt_at", "locked_until"])
    transaction.on_commit(lambda: _dispatch([row.pk]))
    return row
