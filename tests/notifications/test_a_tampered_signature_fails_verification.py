"""The negative control for every signature check here: a body, signature or secret that is not
the one the server signed with fails `standardwebhooks` verification."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import pytest
from standardwebhooks import Webhook
from standardwebhooks.webhooks import WebhookVerificationError

from notifications import services
from notifications.models import TEST_EVENT, Endpoint, new_secret
from tests.conftest import Cast, LiveServer
from tests.notifications.conftest import Receiver, verify


def test_a_tampered_body_signature_or_secret_fails_verification(
    server: LiveServer,
    cast: Cast,
    receiver_factory: Callable[..., Receiver],
    endpoint_factory: Callable[..., Endpoint],
) -> None:
    receiver = receiver_factory()
    endpoint = endpoint_factory(receiver, [], slug="demo")
    delivery = services.endpoint_send_test(endpoint=endpoint, user=cast.user("staff"))
    [received] = receiver.wait_for(1)
    assert verify(endpoint.secret, received)["type"] == TEST_EVENT  # the genuine one passes
    assert received.headers["webhook-id"] == delivery.pk

    tampered_body = replace(received, body=received.body.replace(b'"by":"staff"', b'"by":"mallory"'))
    assert tampered_body.body != received.body
    signature = received.headers["webhook-signature"]
    # A character inside the base64 (the last ones may only carry padding bits).
    flipped = signature[:5] + ("A" if signature[5] != "A" else "B") + signature[6:]
    tampered_signature = replace(received, headers={**received.headers, "webhook-signature": flipped})
    other_id = replace(received, headers={**received.headers, "webhook-id": "msg_someoneelse"})

    for forged in (tampered_body, tampered_signature, other_id):
        with pytest.raises(WebhookVerificationError, match=r"^No matching signature found$"):
            verify(endpoint.secret, forged)
    with pytest.raises(WebhookVerificationError, match=r"^No matching signature found$"):
        Webhook(new_secret()).verify(received.body, received.headers)
