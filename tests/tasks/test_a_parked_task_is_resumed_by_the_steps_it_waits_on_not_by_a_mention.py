"""A task parked on URL-mode steps records which (from its state's structure, whatever other layers
wrap it), and a step's end runs again exactly the tasks that wait on it: a task whose arguments or
state merely mention the step's id as text (it was found by ``request_state__contains``) stays
parked."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from django.utils import timezone

from approvals.models import Elicitation
from mcp_tasks import services
from mcp_tasks.models import Task
from mcpsite.models import Tenant
from tests.round_state_v1 import wrap_state
from tools_app.roundstate import RoundState, url_steps_of_state, wrap_round

pytestmark = pytest.mark.django_db


def step(pk: str) -> Elicitation:
    return Elicitation.objects.create(
        id=pk,
        tenant=Tenant.objects.get(slug="demo"),
        tool="request_refund",
        args_digest="0" * 64,
        reference=f"refund-{pk}",
        kind=Elicitation.Kind.APPROVAL,
        message="Refund?",
        url=f"http://127.0.0.1:8000/approvals/status/{pk}/",
        expires_at=timezone.now() + timedelta(hours=1),
    )


def running_task(arguments: dict[str, str]) -> Task:
    now = timezone.now()
    return Task.objects.create(
        tenant=Tenant.objects.get(slug="demo"),
        client_id="c",
        issuer="i",
        subject="s",
        tool="approved_export",
        arguments=arguments,
        status=Task.Status.WORKING,
        worker="w",
        ttl_ms=3600_000,
        poll_interval_ms=1000,
        expires_at=now + timedelta(hours=1),
    )


def park(task: Task, state: str) -> None:
    outcome = services.Outcome(status=Task.Status.INPUT_REQUIRED, input_requests={"q": {}}, request_state=state)
    assert services.task_finish(task_id=task.pk, worker="w", outcome=outcome)


def url_state(rows: dict[str, str], inner: str) -> str:
    """A round's plaintext state as the round layer leaves it: ours, with the rows, around the SDK's."""
    return wrap_round(RoundState(v=2, names=["decision"], url=rows), inner)


def url_state_v1(rows: dict[str, str], inner: str) -> str:
    """The same as the two middlewares before issue 27 left it: the URL-mode layer inside another."""
    return wrap_state("mcpsite.names", {"keys": {}}, wrap_state("mcpsite.url", {"rows": rows}, inner))


def test_the_steps_of_a_state_are_read_through_every_layer() -> None:
    assert url_steps_of_state(url_state({"decision": "el_a", "paid": "el_b"}, "sdk")) == ["el_a", "el_b"]
    assert url_steps_of_state(wrap_round(RoundState(v=2, names=["region"]), "plain")) == []
    assert url_steps_of_state(url_state_v1({"decision": "el_a", "paid": "el_b"}, "sdk")) == ["el_a", "el_b"]
    assert url_steps_of_state(wrap_state("mcpsite.names", {}, "plain")) == []
    assert url_steps_of_state("not json") == []
    assert url_steps_of_state(json.dumps({"s": json.dumps({"s": "x"})})) == []


def test_a_steps_end_resumes_the_task_waiting_on_it_and_not_one_that_mentions_it() -> None:
    waited_on, other = step("el_waited"), step("el_other")
    waiting, mentioning = running_task({"title": "q4"}), running_task({"title": "el_waited"})
    park(waiting, url_state({"decision": waited_on.pk}, "sdk state"))
    park(mentioning, url_state({"decision": other.pk}, json.dumps({"title": "el_waited"})))

    assert list(waiting.waits_on.values_list("pk", flat=True)) == ["el_waited"]
    assert list(mentioning.waits_on.values_list("pk", flat=True)) == ["el_other"]

    assert services.tasks_resume(elicitation_ids=[waited_on.pk]) == 1
    waiting.refresh_from_db()
    mentioning.refresh_from_db()
    assert (waiting.status, mentioning.status) == (Task.Status.WORKING, Task.Status.INPUT_REQUIRED)


def test_parking_again_replaces_what_the_task_waits_on() -> None:
    first, second = step("el_first"), step("el_second")
    task = running_task({})
    park(task, url_state({"decision": first.pk}, "one"))
    Task.objects.filter(pk=task.pk).update(status=Task.Status.WORKING, worker="w")
    park(task, url_state({"paid": second.pk}, "two"))

    assert list(task.waits_on.values_list("pk", flat=True)) == ["el_second"]
    assert services.tasks_resume(elicitation_ids=[first.pk]) == 0
