"""The Stripe-shaped event every provider delivers, as a strict wire schema.

Strict: a field of the wrong type is refused, never coerced (`"1e9999999"`, `2.5`, `true` or
`[1, 2]` are not an amount; before this schema `Decimal([0, [2], 3])` read as 20 and the others
ended in a 500). Fields we do not read are allowed: providers add fields over time.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from approvals.exceptions import ApprovalsError

logger = logging.getLogger(__name__)

# The largest `Payment.amount` (12 digits, 2 of them decimals) in minor units: anything larger
# cannot pay for anything, so it is a malformed event rather than a mismatch.
MAX_MINOR_UNITS = 999_999_999_999


class _Wire(BaseModel):
    model_config = ConfigDict(strict=True, extra="allow", frozen=True)


class CheckoutSession(_Wire):
    """`data.object` of a ``checkout.session.*`` event (max lengths are the columns it lands in)."""

    id: str = Field(default="", max_length=255)
    client_reference_id: str | None = Field(default=None, max_length=255)
    amount_total: int | None = Field(default=None, ge=0, le=MAX_MINOR_UNITS)
    currency: str | None = Field(default=None, pattern=r"^[A-Za-z]{3}$")
    payment_status: str | None = Field(default=None, max_length=64)


class EventData(_Wire):
    object: dict[str, Any]


class StripeEvent(_Wire):
    id: str = Field(min_length=1, max_length=255)
    type: str = Field(min_length=1, max_length=100)
    data: EventData


class MalformedEvent(ApprovalsError, ValueError):
    pass


def stripe_event_parse(decoded: Mapping[str, Any]) -> tuple[StripeEvent, CheckoutSession | None]:
    """The event and, for a ``checkout.session.*`` event, its session; raises `MalformedEvent`.

    Other event types are recorded and not acted on, so only their envelope is checked.
    """
    try:
        event = StripeEvent.model_validate(decoded)
        if not event.type.startswith("checkout.session."):
            return event, None
        return event, CheckoutSession.model_validate(event.data.object)
    except ValidationError as exc:
        # The operator's log says which field; the wire says only "malformed body".
        where = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors(include_input=False))
        logger.info("malformed provider event: %s", where)
        raise MalformedEvent(where) from None
