"""Task workflows: the wire (create, read, answer, cancel), the worker (claim, renew, finish) and
the beat (sweep). Every one is atomic; a run is handed to a worker only after its row committed."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from approvals.models import Elicitation
from mcp_tasks.conf import tasks_settings
from mcp_tasks.exceptions import McpTasksError
from mcp_tasks.models import Task
from mcpsite.models import Tenant
from mcpsite.net import address_bucket
from tools_app.principal import Principal
from tools_app.roundstate import url_steps_of_state

logger = logging.getLogger(__name__)


class TaskRefused(McpTasksError):
    """What the wire layer maps to a JSON-RPC error: ``reason`` is ``not_found`` (unknown,
    another principal's or another tenant's: one answer, so ids cannot be probed),
    ``too_many_tasks`` (the cap, with ``limit``) or ``bad_answer`` (an input response that does
    not parse)."""

    def __init__(self, *, reason: str, message: str, limit: int | None = None) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message
        self.limit = limit


def _not_found() -> TaskRefused:
    return TaskRefused(reason="not_found", message="Unknown taskId")


# --- the wire -------------------------------------------------------------------------------


def task_create(
    *,
    tenant_id: int,
    principal: Principal,
    tool: str,
    arguments: dict[str, Any],
    client_capabilities: dict[str, Any],
    input_responses: dict[str, Any] | None = None,
    request_state: str = "",
    max_attempts: int = 1,
    client_address: str = "",
) -> Task:
    """A new working task; its first run is enqueued once the row is committed (so a worker, or
    a ``tasks/get`` in another process, always finds it).

    The cap counts the person's unfinished tasks at this tenant (issuer and subject, whichever
    of their OAuth clients started them: a fresh client registration is not a fresh cap; the
    task still belongs to the full principal). Anonymous callers (a public tenant) are all one
    principal, so theirs are counted per ``client_address`` instead (an IPv6 client by its /64,
    `address_bucket`): one caller filling the cap does not lock the others out, as for
    anonymous sessions."""
    conf = tasks_settings()
    now = timezone.now()
    limit = conf["MAX_LIVE_PER_PRINCIPAL"]
    with transaction.atomic():
        # Creating tasks at one tenant is serialized on its row (FOR NO KEY UPDATE: inserts that
        # merely reference the tenant are not blocked), so two processes counting at once cannot
        # both take the last place; as approvals' cap on pending rows does.
        list(Tenant.objects.select_for_update(no_key=True).filter(pk=tenant_id).values_list("pk", flat=True))
        anonymous = principal.is_anonymous
        client_address = address_bucket(client_address) if anonymous else ""
        live = Task.objects.of_person(tenant_id=tenant_id, principal=principal).live()
        if anonymous:
            live = live.filter(client_address=client_address)
        if live.count() >= limit:
            where = "here from this client address" if anonymous else "here"
            raise TaskRefused(
                reason="too_many_tasks",
                message=f"You have {limit} unfinished tasks {where}, the most allowed at once. "
                "Wait for one to end or cancel one (tasks/cancel), then call again.",
                limit=limit,
            )
        client_id, issuer, subject = principal
        task = Task.objects.create(
            tenant_id=tenant_id,
            client_id=client_id,
            issuer=issuer,
            subject=subject,
            client_address=client_address,
            tool=tool,
            arguments=arguments,
            client_capabilities=client_capabilities,
            input_responses=input_responses or {},
            request_state=request_state,
            ttl_ms=conf["TTL_SECONDS"] * 1000,
            poll_interval_ms=conf["POLL_INTERVAL_MS"],
            created_at=now,
            updated_at=now,
            expires_at=now + timedelta(seconds=conf["TTL_SECONDS"]),
            max_attempts=max_attempts,
            # A pickup deadline: a run lost before any worker claimed it is found by the sweep.
            claimed_until=now + timedelta(seconds=conf["LEASE_SECONDS"]),
        )
        _enqueue_on_commit(task.pk)
    return task


def task_get(*, task_id: str, tenant_id: int, principal: Principal) -> Task:
    task = Task.objects.owned_by(tenant_id=tenant_id, principal=principal).filter(pk=task_id).first()
    if task is None or task.expires_at <= timezone.now():
        raise _not_found()
    return task


def task_cancel(*, task_id: str, tenant_id: int, principal: Principal | None, source: str = "client") -> Task:
    """Cancel a live task; an ended one stays as it ended (cancelling is idempotent). A worker
    running it sees the status at its next lease renewal and stops. ``principal=None``: staff."""
    with transaction.atomic():
        rows = Task.objects.select_for_update().filter(pk=task_id, tenant_id=tenant_id)
        if principal is not None:
            rows = rows.owned_by(tenant_id=tenant_id, principal=principal)
        task = rows.first()
        if task is None or (principal is not None and task.expires_at <= timezone.now()):
            raise _not_found()
        if task.is_terminal:
            return task
        task.status = Task.Status.CANCELLED
        task.input_requests = {}
        task.claimed_until = None
        task.updated_at = timezone.now()
        task.expires_at, task.ttl_ms = _kept_after_ending(task, task.updated_at)
        task.save(update_fields=["status", "input_requests", "claimed_until", "updated_at", "expires_at", "ttl_ms"])
        logger.info("task %s cancelled by %s", task.pk, source)
    return task


def task_answer(*, task_id: str, tenant_id: int, principal: Principal, responses: dict[str, Any]) -> Task:
    """Record answers to the task's open questions (``tasks/update``). Answers to keys it did
    not ask (or no longer asks) are ignored; once every question is answered, the task runs
    again with them."""
    from mcp_types import CallToolRequestParams
    from pydantic import ValidationError

    with transaction.atomic():
        task = (
            Task.objects.select_for_update()
            .owned_by(tenant_id=tenant_id, principal=principal)
            .filter(pk=task_id)
            .first()
        )
        if task is None or task.expires_at <= timezone.now():
            raise _not_found()
        if task.status != Task.Status.INPUT_REQUIRED:
            return task
        answered = {key: value for key, value in responses.items() if key in task.input_requests}
        if not answered:
            return task
        try:  # the shape the tool will read them in, checked now rather than failing the run
            CallToolRequestParams.model_validate({"name": task.tool, "inputResponses": answered})
        except ValidationError:
            raise TaskRefused(
                reason="bad_answer", message="inputResponses do not answer the task's inputRequests"
            ) from None
        task.input_responses = {**task.input_responses, **answered}
        task.input_requests = {k: v for k, v in task.input_requests.items() if k not in answered}
        now = timezone.now()
        task.updated_at = now
        if not task.input_requests:
            task.status = Task.Status.WORKING
            task.worker = ""
            task.claimed_until = now + timedelta(seconds=tasks_settings()["LEASE_SECONDS"])
            _enqueue_on_commit(task.pk)
        task.save()
    return task


def task_waits_on_set(*, task_id: str, request_state: str) -> None:
    """Record the URL-mode steps a parked task waits on: the rows its state says the round showed."""
    steps = url_steps_of_state(request_state)
    through = Task.waits_on.through
    through.objects.filter(task_id=task_id).delete()
    existing = Elicitation.objects.filter(pk__in=steps).values_list("pk", flat=True)
    through.objects.bulk_create([through(task_id=task_id, elicitation_id=pk) for pk in existing])


def tasks_resume(*, elicitation_ids: list[str]) -> int:
    """Run again the tasks parked on any of these URL-mode steps (called inside the transaction that
    ended them; the runs are enqueued after it commits), found through what each waits on: one
    query per call, however many rows ended (the beat expires them 500 at a time)."""
    if not elicitation_ids:
        return 0
    parked = Task.objects.filter(waits_on__in=elicitation_ids, status=Task.Status.INPUT_REQUIRED)
    waiting = list(parked.values_list("pk", flat=True).distinct())
    resumed = 0
    lease = timedelta(seconds=tasks_settings()["LEASE_SECONDS"])
    for task_id in waiting:
        now = timezone.now()
        if Task.objects.filter(pk=task_id, status=Task.Status.INPUT_REQUIRED).update(
            status=Task.Status.WORKING, input_requests={}, worker="", claimed_until=now + lease, updated_at=now
        ):
            resumed += 1
            _enqueue_on_commit(task_id)
    return resumed


# --- the worker -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Outcome:
    """How one run ended: ``completed`` (with the tool's result, an error result included),
    ``failed`` (a protocol-level error), or ``input_required`` (questions and the tool's state)."""

    status: Task.Status
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    input_requests: dict[str, Any] | None = None
    request_state: str = ""


def task_run_key(*, task_id: str) -> tuple[int, str] | None:
    """Whose run this is, for the runner's limits and turns: the tenant, and the person (a
    signed-in user across their OAuth clients; a client without a user by its id; an anonymous
    caller of a public tenant by address). None when no run is due (ended, or someone runs it)."""
    row = (
        Task.objects.filter(pk=task_id, status=Task.Status.WORKING, worker="")
        .values_list("tenant_id", "client_id", "issuer", "subject", "client_address")
        .first()
    )
    if row is None:
        return None
    tenant_id, client_id, issuer, subject, client_address = row
    if subject:
        return tenant_id, f"user {issuer} {subject}"
    return tenant_id, f"client {client_id}" if client_id else f"address {client_address}"


def tasks_hold_queued(*, task_ids: list[str]) -> int:
    """Push the pickup deadline of these waiting (unclaimed) runs a lease ahead: their process is
    alive and will start them, so the sweep must not take them for lost."""
    lease = timedelta(seconds=tasks_settings()["LEASE_SECONDS"])
    return Task.objects.filter(pk__in=task_ids, status=Task.Status.WORKING, worker="").update(
        claimed_until=timezone.now() + lease
    )


def task_claim(*, task_id: str, worker: str) -> Task | None:
    """Start a run: only a working task nobody runs can be claimed, so a run enqueued twice runs once."""
    now = timezone.now()
    claimed = Task.objects.filter(pk=task_id, status=Task.Status.WORKING, worker="").update(
        worker=worker,
        attempts=F("attempts") + 1,
        claimed_until=now + timedelta(seconds=tasks_settings()["LEASE_SECONDS"]),
        updated_at=now,
    )
    return Task.objects.select_related("tenant").get(pk=task_id) if claimed else None


def task_renew(*, task_id: str, worker: str) -> bool:
    """Extend this run's lease; False when the run must stop (cancelled, or declared lost)."""
    lease = timedelta(seconds=tasks_settings()["LEASE_SECONDS"])
    return bool(
        Task.objects.filter(pk=task_id, status=Task.Status.WORKING, worker=worker).update(
            claimed_until=timezone.now() + lease
        )
    )


def task_finish(*, task_id: str, worker: str, outcome: Outcome) -> bool:
    """Write how the run ended, unless the task was cancelled (or taken from this run) meanwhile."""
    now = timezone.now()
    fields: dict[str, Any] = {"status": outcome.status, "updated_at": now, "worker": "", "claimed_until": None}
    rows = Task.objects.filter(pk=task_id, status=Task.Status.WORKING, worker=worker)
    if outcome.status == Task.Status.INPUT_REQUIRED:
        fields.update(
            input_requests=outcome.input_requests or {}, input_responses={}, request_state=outcome.request_state
        )
        with transaction.atomic():
            parked = bool(rows.update(**fields))
            if parked:
                task_waits_on_set(task_id=task_id, request_state=outcome.request_state)
        return parked
    fields.update(result=outcome.result, error=outcome.error, input_requests={}, input_responses={})
    with transaction.atomic():
        task = rows.select_for_update().only("created_at", "expires_at").first()
        if task is None:
            return False
        return bool(rows.update(**fields, **_retention_fields(task, now)))


def _retention_fields(task: Task, now: datetime) -> dict[str, Any]:
    expires_at, ttl_ms = _kept_after_ending(task, now)
    return {"expires_at": expires_at, "ttl_ms": ttl_ms}


def _kept_after_ending(task: Task, now: datetime) -> tuple[datetime, int]:
    """When a task that ends now expires (``FINISHED_KEEP_SECONDS`` on, within its TTL), and the
    ttlMs that says so (the wire's ttlMs is the retention counted from creation)."""
    expires_at = min(task.expires_at, now + timedelta(seconds=tasks_settings()["FINISHED_KEEP_SECONDS"]))
    return expires_at, max(0, int((expires_at - task.created_at).total_seconds() * 1000))


# --- the beat -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Sweep:
    deleted: int
    retried: int
    failed: int


LOST_WORKER = {"code": -32603, "message": "The worker running this task was lost", "data": {"reason": "worker_lost"}}


def tasks_sweep(*, now: datetime | None = None) -> Sweep:
    """Delete tasks past their TTL (bounded: `_expired_delete`); a working task whose lease ran
    out is run again (when it was never picked up, or its tool allows another attempt) or ends failed."""
    now = now or timezone.now()
    deleted = _expired_delete(now)
    retried = failed = 0
    lease = timedelta(seconds=tasks_settings()["LEASE_SECONDS"])
    lost = Task.objects.lost(now).only("pk", "worker", "attempts", "max_attempts", "created_at", "expires_at")
    for task in lost:
        with transaction.atomic():
            rows = Task.objects.filter(
                pk=task.pk, status=Task.Status.WORKING, worker=task.worker, claimed_until__lte=now
            )
            if not task.worker or task.attempts < task.max_attempts:
                if rows.update(worker="", claimed_until=now + lease, updated_at=now):
                    retried += 1
                    _enqueue_on_commit(task.pk)
                    logger.warning(
                        "task %s: worker lost (attempt %d of %d); run again", task.pk, task.attempts, task.max_attempts
                    )
            elif rows.update(
                status=Task.Status.FAILED,
                error=LOST_WORKER,
                worker="",
                claimed_until=None,
                updated_at=now,
                **_retention_fields(task, now),
            ):
                failed += 1
                logger.warning("task %s: worker lost on its last attempt; failed", task.pk)
    return Sweep(deleted=deleted, retried=retried, failed=failed)


def _expired_delete(now: datetime) -> int:
    """Delete expired tasks ``DELETE_BATCH_SIZE`` at a time, each batch its own short transaction,
    and at most ``DELETE_BATCHES_PER_SWEEP`` batches: a backlog (a day of a busy member's tasks
    after the beat was down) is worked off over several runs instead of one long lock."""
    conf = tasks_settings()
    deleted = 0
    for _ in range(conf["DELETE_BATCHES_PER_SWEEP"]):
        with transaction.atomic():
            batch = list(
                Task.objects.expired(now)
                .order_by("expires_at")
                .select_for_update(skip_locked=True)
                .values_list("pk", flat=True)[: conf["DELETE_BATCH_SIZE"]]
            )
            if batch:
                deleted += Task.objects.filter(pk__in=batch).delete()[0]
        if len(batch) < conf["DELETE_BATCH_SIZE"]:
            break
    return deleted


def _enqueue_on_commit(task_id: str) -> None:
    from mcp_tasks import dispatch

    transaction.on_commit(lambda: dispatch.enqueue(task_id))
