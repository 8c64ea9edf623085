"""Every key-ring step's audit row names who took it and which way (`mcpsite.actors.Actor`): a
command's step has no user and says so; staff's in the admin name the staff member; the operator
API's name the client too (tests/api/test_key_ring_through_the_api.py)."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User

from mcpsite.actors import Actor, Via
from mcpsite.keyring import rotation
from mcpsite.models import KeyRingEvent

pytestmark = pytest.mark.django_db  # rolled back: the suite's ring is left as it was


def test_a_commands_step_and_staffs_are_told_apart(django_user_model: type[User]) -> None:
    staff = django_user_model.objects.create_user("keeper", is_staff=True)
    key = rotation.keyring_add_key()
    rotation.keyring_promote(key=key, actor=Actor(Via.STAFF, staff), check_rollout=False)

    events = list(KeyRingEvent.objects.filter(kid=key.kid).order_by("at", "pk"))
    assert [(e.action, e.actor_id, e.via, e.oauth_client) for e in events] == [
        ("added", None, "command", ""),
        ("promoted", staff.pk, "staff", ""),
    ]
    assert events[-1].get_via_display() == "staff, in the admin"
