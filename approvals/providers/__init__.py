"""Payment providers: create the checkout URL; verify and parse a webhook.

A provider never touches rows: `approvals.services` applies what it parsed. Every provider
signs the Stripe way (``Stripe-Signature: t=<ts>,v1=<hmac-sha256 of "<ts>.<body>">``), so
`verify_stripe_signature` is shared and done by the official ``stripe`` library.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Protocol

import stripe

from approvals.conf import approvals_settings


class WebhookRejected(Exception):
    """A delivery that proves nothing (bad or missing signature, stale, malformed): answer 400, change nothing."""

    def __init__(self, *, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class UnknownProvider(LookupError):
    pass


@dataclass(frozen=True)
class PaymentEvent:
    """A verified provider event, reduced to what `payment_webhook_apply` needs."""

    provider: str
    event_id: str
    type: str
    elicitation_id: str | None
    provider_reference: str
    amount: Decimal | None
    currency: str | None
    paid: bool
    payload: dict[str, Any]


class PaymentProvider(Protocol):
    name: str

    def checkout_url(self, *, elicitation_id: str) -> str: ...

    def parse_webhook(self, *, body: bytes, headers: Mapping[str, str]) -> PaymentEvent:
        """Verify the signature and parse the event; raise `WebhookRejected` otherwise."""
        ...


def verify_stripe_signature(*, body: bytes, header: str | None, secret: str) -> dict[str, Any]:
    """Check ``Stripe-Signature`` (5-minute tolerance by default) and return the decoded JSON body."""
    try:
        stripe.WebhookSignature.verify_header(
            body, header, secret, tolerance=approvals_settings()["WEBHOOK_TOLERANCE_SECONDS"]
        )
    except stripe.SignatureVerificationError as exc:
        text = str(exc)
        if not header:
            raise WebhookRejected(reason="missing signature") from None
        if text.startswith("Timestamp outside the tolerance zone"):
            raise WebhookRejected(reason="stale timestamp") from None
        raise WebhookRejected(reason="bad signature") from None
    except UnicodeDecodeError:
        raise WebhookRejected(reason="malformed body") from None
    try:
        decoded = json.loads(body)
    except ValueError:
        raise WebhookRejected(reason="malformed body") from None
    if not isinstance(decoded, dict):
        raise WebhookRejected(reason="malformed body")
    return decoded


def stripe_signature_header(*, body: bytes, secret: str, timestamp: int | None = None) -> str:
    """The header a provider (our sandbox, or a test) sends with ``body``."""
    return str(stripe.WebhookSignature.generate_signature_header(body.decode(), secret, timestamp=timestamp))


def get_provider(name: str) -> PaymentProvider:
    from approvals.providers.sandbox import SandboxProvider

    providers: dict[str, PaymentProvider] = {SandboxProvider.name: SandboxProvider()}
    try:
        return providers[name]
    except KeyError:
        raise UnknownProvider(name) from None


DEFAULT_PROVIDER = "sandbox"
