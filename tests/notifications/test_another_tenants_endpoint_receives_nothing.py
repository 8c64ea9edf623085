"""A tenant's events go to its own endpoints only: alice's approval at `demo` reaches demo's
endpoint and nothing reaches `other`'s, and mallory's at `other` the other way round."""

from __future__ import annotations

import time
from collections.abc import Callable

from notifications.models import Delivery, Endpoint, EventType
from tests.conftest import Cast, LiveServer
from tests.notifications.conftest import SEND_EVERY_SECONDS, Receiver, ask_refund, settle, verify


def test_another_tenants_endpoint_receives_nothing_of_this_tenants(
    server: LiveServer,
    cast: Cast,
    receiver_factory: Callable[..., Receiver],
    endpoint_factory: Callable[..., Endpoint],
) -> None:
    demo_receiver, other_receiver = receiver_factory(), receiver_factory()
    demo = endpoint_factory(demo_receiver, [EventType.APPROVAL_PENDING], slug="demo")
    other = endpoint_factory(other_receiver, [EventType.APPROVAL_PENDING], slug="other")

    alices = ask_refund(server, cast, "T-1", user="alice", slug="demo")
    try:
        [received] = demo_receiver.wait_for(1)
        assert verify(demo.secret, received)["data"]["elicitation"] == alices.row.pk
        time.sleep(5 * SEND_EVERY_SECONDS)  # several sends later
        assert other_receiver.received == []
        assert not Delivery.objects.filter(endpoint=other).exists()
    finally:
        settle(alices, cast)

    mallorys = ask_refund(server, cast, "T-2", user="mallory", slug="other")
    try:
        [received] = other_receiver.wait_for(1)
        data = verify(other.secret, received)["data"]
        assert (data["tenant"], data["elicitation"]) == ("other", mallorys.row.pk)
        time.sleep(5 * SEND_EVERY_SECONDS)
        assert len(demo_receiver.received) == 1
        assert Delivery.objects.filter(endpoint=demo).count() == 1
    finally:
        settle(mallorys, cast)
