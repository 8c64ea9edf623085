"""Payment providers: create the checkout URL; verify and parse a webhook.

A provider never touches rows: `approvals.services.webhooks` applies what it parsed. Every provider
signs the Stripe way (``Stripe-Signature: t=<ts>,v1=<hmac-sha256 of "<ts>.<body>">``), so
`verify_stripe_signature` is shared and done by the official ``stripe`` library.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Protocol

import stripe

from approvals.conf import approvals_settings
from approvals.exceptions import ApprovalsError
from mcpsite.jsonbody import JSONTooDeep, json_loads_bounded


class WebhookRejected(ApprovalsError):
    """A delivery that proves nothing (bad or missing signature, stale, malformed): answer 400, change nothing."""

    def __init__(self, *, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class UnknownProvider(ApprovalsError, LookupError):
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


def _signed_at(header: str) -> int:
    """The header's timestamp, read as the stripe library reads it (the first ``t=`` item)."""
    return int(next(item.split("=", 2)[1] for item in header.split(",") if item.split("=", 2)[0] == "t"))


def verify_stripe_signature(*, body: bytes, header: str | None, secret: str) -> dict[str, Any]:
    """Check ``Stripe-Signature`` and return the decoded JSON body.

    The timestamp must lie within the tolerance (5 minutes by default) either side of now. The
    stripe library only refuses an old one; a signature dated ahead would stay replayable until
    that date plus the tolerance, so it is refused too.
    """
    if not header:
        raise WebhookRejected(reason="missing signature")
    tolerance = approvals_settings()["WEBHOOK_TOLERANCE_SECONDS"]
    try:
        stripe.WebhookSignature.verify_header(body, header, secret, tolerance=tolerance)
    except stripe.SignatureVerificationError as exc:
        text = str(exc)
        if text.startswith("Timestamp outside the tolerance zone"):
            raise WebhookRejected(reason="stale timestamp") from None
        raise WebhookRejected(reason="bad signature") from None
    except UnicodeDecodeError:
        raise WebhookRejected(reason="malformed body") from None
    if tolerance and _signed_at(header) > time.time() + tolerance:
        raise WebhookRejected(reason="future timestamp")
    try:
        decoded = json_loads_bounded(body)
    except JSONTooDeep:
        raise WebhookRejected(reason="body nested too deeply") from None
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
