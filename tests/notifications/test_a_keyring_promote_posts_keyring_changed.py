"""Adding and promoting a requestState key posts signed ``keyring.changed`` events to the
site-wide endpoint, and to a tenant's endpoint only if it subscribed to them."""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings

from mcpsite.actors import Actor, Via
from mcpsite.keyring import rotation
from notifications.models import Delivery, Endpoint, EventType
from tests.conftest import Cast, LiveServer
from tests.notifications.conftest import Receiver, verify


def test_a_keyring_promote_posts_keyring_changed_to_the_site_wide_endpoint(
    server: LiveServer,
    cast: Cast,
    receiver_factory: Callable[..., Receiver],
    endpoint_factory: Callable[..., Endpoint],
) -> None:
    site_receiver, subscribed_receiver, unsubscribed_receiver = (
        receiver_factory(),
        receiver_factory(),
        receiver_factory(),
    )
    site = endpoint_factory(site_receiver, [EventType.KEYRING_CHANGED], slug=None)
    subscribed = endpoint_factory(subscribed_receiver, [EventType.KEYRING_CHANGED], slug="other")
    unsubscribed = endpoint_factory(unsubscribed_receiver, [EventType.APPROVAL_PENDING], slug="demo")

    staff = Actor(Via.STAFF, cast.user("staff"))
    key = rotation.keyring_add_key(actor=staff)
    rotation.keyring_promote(key=key, actor=staff, check_rollout=False)

    events = [verify(site.secret, received) for received in site_receiver.wait_for(2)]
    assert sorted((e["type"], e["data"]["action"], e["data"]["kid"]) for e in events) == [
        ("keyring.changed", "added", key.kid),
        ("keyring.changed", "promoted", key.kid),
    ]
    # Recorded by this process (the promote ran here), so its site root names the admin.
    assert {e["data"]["admin_url"] for e in events} == {f"{settings.SITE_ROOT}/admin/mcpsite/requeststatekey/"}
    assert len([verify(subscribed.secret, r) for r in subscribed_receiver.wait_for(2)]) == 2
    assert not Delivery.objects.filter(endpoint=unsubscribed).exists()
    assert unsubscribed_receiver.received == []
