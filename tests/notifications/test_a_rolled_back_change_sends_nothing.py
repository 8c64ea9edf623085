"""Events are recorded in the transaction of the change they report: an approval opened and a
key added in a transaction that rolls back leave no delivery and post nothing."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable

import pytest
from django.db import transaction

from approvals.models import Elicitation
from approvals.services.opening import elicitation_open
from mcpsite.keyring import rotation
from mcpsite.models import RequestStateKey
from notifications import services
from notifications.models import TEST_EVENT, Delivery, Endpoint, EventType
from tests.conftest import Cast, LiveServer
from tests.notifications.conftest import SEND_EVERY_SECONDS, Receiver, verify
from tools_app.principal import Principal


class Rollback(Exception):
    pass


def test_a_rolled_back_change_sends_nothing(
    server: LiveServer,
    cast: Cast,
    receiver_factory: Callable[..., Receiver],
    endpoint_factory: Callable[..., Endpoint],
) -> None:
    receiver = receiver_factory()
    tenant = endpoint_factory(receiver, [EventType.APPROVAL_PENDING], slug="demo")
    site = endpoint_factory(receiver, [EventType.KEYRING_CHANGED], slug=None)
    digest = uuid.uuid4().hex

    with pytest.raises(Rollback), transaction.atomic():
        elicitation_open(
            tenant_id=cast.tenant("demo").pk,
            principal=Principal("client-rollback", "issuer", str(cast.user("alice").pk)),
            tool="request_refund",
            args_digest=digest,
            kind=Elicitation.Kind.APPROVAL,
            reference="refund-rollback",
            message="This needs a staff approval",
        )
        key = rotation.keyring_add_key()
        assert Delivery.objects.filter(endpoint__in=[tenant, site]).count() == 2  # recorded, not yet committed
        raise Rollback

    assert not Elicitation.objects.filter(args_digest=digest).exists()
    assert not RequestStateKey.objects.filter(kid=key.kid).exists()
    assert not Delivery.objects.filter(endpoint__in=[tenant, site]).exists()
    # The control: a committed event to the same receiver arrives, and it is the only one.
    control = services.endpoint_send_test(endpoint=tenant)
    [received] = receiver.wait_for(1)
    assert (received.headers["webhook-id"], verify(tenant.secret, received)["type"]) == (control.pk, TEST_EVENT)
    time.sleep(5 * SEND_EVERY_SECONDS)
    assert len(receiver.received) == 1
