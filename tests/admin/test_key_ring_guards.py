"""The rotation steps refuse what would break rounds in flight, say how long to wait, and are audited."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.utils import timezone

from mcpsite.actors import Actor, Via
from mcpsite.keyring import rotation
from mcpsite.models import KeyRingEvent, ProcessHeartbeat, RequestStateKey

pytestmark = pytest.mark.django_db


def heartbeat(process_id: str, kids: list[str], seen_ago: float = 0.0) -> None:
    now = timezone.now()
    ProcessHeartbeat.objects.create(
        process_id=process_id,
        hostname="h",
        pid=1,
        ring_version="v",
        ring_kids=kids,
        started_at=now,
        seen_at=now - timedelta(seconds=seen_ago),
    )


@pytest.fixture(autouse=True)
def no_real_processes() -> None:
    ProcessHeartbeat.objects.all().delete()  # rolled back after the test


def test_promotion_waits_for_every_live_process_to_load_the_key() -> None:
    key = rotation.keyring_add_key()
    minting = RequestStateKey.objects.get(phase="minting")
    heartbeat("a", [minting.kid, key.kid])
    heartbeat("b", [minting.kid])
    heartbeat("gone", [minting.kid], seen_ago=3600)  # not live: ignored
    with pytest.raises(rotation.KeyRingRefused, match=r"Only 1 of 2 live processes have loaded key .*Try again"):
        rotation.keyring_promote(key=key)
    ProcessHeartbeat.objects.filter(process_id="b").update(ring_kids=[minting.kid, key.kid])
    assert rotation.keyring_promote(key=key).phase == "minting"
    minting.refresh_from_db()
    assert minting.phase == "verifying" and minting.minting_until is not None


def test_without_heartbeats_promotion_waits_out_the_propagation_bound() -> None:
    key = rotation.keyring_add_key()
    with pytest.raises(rotation.KeyRingRefused, match=r"No process reports its key ring.* s more"):
        rotation.keyring_promote(key=key)
    RequestStateKey.objects.filter(pk=key.pk).update(created_at=timezone.now() - timedelta(minutes=5))
    assert rotation.keyring_promote(key=key).phase == "minting"


def test_retirement_waits_one_ttl_after_minting_stopped_unless_overridden() -> None:
    old = RequestStateKey.objects.get(phase="minting")
    new = rotation.keyring_promote(key=rotation.keyring_add_key(), check_rollout=False)
    with pytest.raises(rotation.KeyRingRefused, match="minting; promote another key first"):
        rotation.keyring_retire(key=new)
    with pytest.raises(rotation.KeyRingRefused, match=r"may still be in flight until .* retire it in \d+ s"):
        rotation.keyring_retire(key=old)
    RequestStateKey.objects.filter(pk=old.pk).update(minting_until=timezone.now() - timedelta(hours=1))
    assert rotation.keyring_retire(key=old).phase == "retired"
    assert KeyRingEvent.objects.filter(kid=old.kid, action="retired", note="").exists()


def test_retire_now_override_is_audited_with_what_it_breaks(django_user_model: type[User]) -> None:
    operator = django_user_model.objects.create_user("operator")
    old = RequestStateKey.objects.get(phase="minting")
    staff = Actor(Via.STAFF, operator)
    rotation.keyring_promote(key=rotation.keyring_add_key(actor=staff), actor=staff, check_rollout=False)
    rotation.keyring_retire(key=old, actor=staff, now_override=True)
    event = KeyRingEvent.objects.get(kid=old.kid, actor=operator)
    assert event.action == "retired_now"
    assert event.actor == operator
    assert "now fail with -32602" in event.note
    assert list(KeyRingEvent.objects.filter(actor=operator).values_list("action", flat=True)) == [
        "retired_now",
        "promoted",
        "added",
    ]


def test_staff_without_the_rotate_permission_see_the_ring_read_only(django_user_model: type[User]) -> None:
    from django.contrib.auth.models import Permission

    viewer = django_user_model.objects.create_user("viewer", is_staff=True)
    viewer.user_permissions.add(Permission.objects.get(codename="view_requeststatekey"))
    client = Client()
    client.force_login(viewer)
    changelist = client.get("/admin/mcpsite/requeststatekey/")
    assert changelist.status_code == 200
    assert "Promote to minting" not in changelist.text
    assert client.get("/admin/mcpsite/requeststatekey/add/").status_code == 403
    key = rotation.keyring_add_key()
    before = set(RequestStateKey.objects.values_list("kid", "phase"))
    response = client.post(
        "/admin/mcpsite/requeststatekey/", {"action": "promote", "_selected_action": [key.pk], "index": 0}
    )
    # The action is not offered to them, so Django re-shows the list; nothing changed.
    assert response.status_code in {200, 302, 403}
    assert "now mints new requestState" not in response.text
    assert set(RequestStateKey.objects.values_list("kid", "phase")) == before
