"""The built-in sandbox provider: our own checkout page, and Stripe-shaped signed webhooks.

Pressing *Pay* on the checkout page builds a ``checkout.session.completed`` event, signs it
with the sandbox secret and hands it to the same receiver a real provider's delivery reaches
(`approvals.services.webhooks.webhook_receive`), so the sandbox exercises the whole verified path.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from django.conf import settings
from django.urls import reverse

from approvals.conf import approvals_settings
from approvals.providers import PaymentEvent, WebhookRejected, stripe_signature_header, verify_stripe_signature
from approvals.providers.wire import MalformedEvent, stripe_event_parse

SIGNATURE_HEADER = "Stripe-Signature"


def webhook_secret() -> str:
    configured = approvals_settings()["SANDBOX_WEBHOOK_SECRET"]
    if configured:
        return configured
    derived = hmac.new(settings.SECRET_KEY.encode(), b"mcpsite/approvals/sandbox-webhook/v1", hashlib.sha256)
    return f"whsec_{derived.hexdigest()}"


def minor_units(amount: Decimal) -> int:
    return int((amount * 100).to_integral_value())


def checkout_completed_event(
    *, elicitation_id: str, provider_reference: str, amount: Decimal, currency: str, event_id: str | None = None
) -> dict[str, Any]:
    """A Stripe-shaped ``checkout.session.completed`` event for one paid checkout."""
    return {
        "id": event_id or f"evt_{secrets.token_hex(12)}",
        "object": "event",
        "type": "checkout.session.completed",
        "data": {
            "object": {
                "id": provider_reference,
                "object": "checkout.session",
                "client_reference_id": elicitation_id,
                "amount_total": minor_units(amount),
                "currency": currency.lower(),
                "payment_status": "paid",
            }
        },
    }


def signed_delivery(event: dict[str, Any], *, timestamp: int | None = None) -> tuple[bytes, dict[str, str]]:
    body = json.dumps(event, separators=(",", ":")).encode()
    return body, {SIGNATURE_HEADER: stripe_signature_header(body=body, secret=webhook_secret(), timestamp=timestamp)}


class SandboxProvider:
    name = "sandbox"

    def checkout_url(self, *, elicitation_id: str) -> str:
        return f"{settings.SITE_ROOT}{reverse('approvals:checkout', args=[elicitation_id])}"

    def parse_webhook(self, *, body: bytes, headers: Mapping[str, str]) -> PaymentEvent:
        decoded = verify_stripe_signature(body=body, header=headers.get(SIGNATURE_HEADER), secret=webhook_secret())
        try:
            event, session = stripe_event_parse(decoded)
        except MalformedEvent:
            raise WebhookRejected(reason="malformed body") from None
        if session is None:
            return PaymentEvent(
                provider=self.name,
                event_id=event.id,
                type=event.type,
                elicitation_id=None,
                provider_reference="",
                amount=None,
                currency=None,
                paid=False,
                payload=decoded,
            )
        return PaymentEvent(
            provider=self.name,
            event_id=event.id,
            type=event.type,
            elicitation_id=session.client_reference_id,
            provider_reference=session.id,
            amount=Decimal(session.amount_total) / 100 if session.amount_total is not None else None,
            currency=session.currency.upper() if session.currency is not None else None,
            paid=session.payment_status == "paid",
            payload=decoded,
        )
