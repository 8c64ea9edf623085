"""What a `url_step` resolver returns (a step: `Payment`, `Approval`, `Consent`) and what the tool
receives when it ended (`Completed`, `Declined`, `Cancelled`, `Expired`). Plain data: how a step
is fulfilled is `tools_app.urlmode.fulfil`."""

from __future__ import annotations

import typing
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

# --- what a resolver returns ---------------------------------------------------------------


@dataclass(frozen=True)
class UrlStep:
    """Base of the steps; `reference` names the step within the call (reused on a repeat)."""

    reference: str
    expires_in: float | None = field(default=None, kw_only=True)

    kind: typing.ClassVar[str]

    @property
    def message(self) -> str:
        raise NotImplementedError


@dataclass(frozen=True)
class Payment(UrlStep):
    """Ask the user to pay `amount` `currency` on the provider's checkout page."""

    amount: str | Decimal = "0"
    currency: str = "EUR"
    description: str = ""
    provider: str = "sandbox"

    kind = "payment"

    @property
    def message(self) -> str:
        what = self.description or self.reference
        return f"Please pay {Decimal(self.amount):.2f} {self.currency.upper()} for {what}."


@dataclass(frozen=True)
class Approval(UrlStep):
    """Wait for a staff member to approve or deny (admin); the user gets a status page."""

    reason: str = ""
    # The sum the decision is about (a refund), shown to staff as a field.
    amount: str | Decimal | None = None
    currency: str = "EUR"

    kind = "approval"

    @property
    def message(self) -> str:
        return f"This needs a staff approval: {self.reason}. Follow its status at the link."


@dataclass(frozen=True)
class Consent(UrlStep):
    """Ask the user to agree to `text` on a consent page."""

    text: str = ""

    kind = "consent"

    @property
    def message(self) -> str:
        return f"Your consent is needed: {self.text}"


# --- what the tool receives ---------------------------------------------------------------


@dataclass(frozen=True)
class Completed:
    """Paid, approved or agreed; `receipt` says by what (provider event, staff decision...)."""

    elicitation_id: str
    receipt: dict[str, Any]


@dataclass(frozen=True)
class Declined:
    elicitation_id: str
    note: str = ""


@dataclass(frozen=True)
class Cancelled:
    elicitation_id: str
    reason: str = ""


@dataclass(frozen=True)
class Expired(Cancelled):
    """Nobody finished it in time (a kind of cancellation: ``case Cancelled()`` matches it too)."""


UrlOutcome = Completed | Declined | Cancelled
