"""A task parked on a URL-mode step (a payment, an approval, a consent) runs again when the step's
row ends, whoever ended it (webhook, staff, the beat): approvals says so, without knowing of us."""

from __future__ import annotations

from typing import Any

from django.dispatch import receiver

from approvals.signals import elicitations_ended
from mcp_tasks import services


@receiver(elicitations_ended)
def resume_waiting_tasks(sender: Any, elicitation_ids: list[str], **kwargs: Any) -> None:
    services.tasks_resume(elicitation_ids=elicitation_ids)
