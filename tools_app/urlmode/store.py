"""The port through which URL-mode steps reach their rows: `UrlStepStore`. The composer hands the
store of the app that keeps them (`approvals`) to each tenant's server in its lifespan state
(`TenantInfo.url_steps`), so the framework imports none of it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from tools_app.exceptions import ToolsAppError
from tools_app.principal import Principal
from tools_app.urlmode.steps import UrlOutcome, UrlStep


@dataclass(frozen=True)
class PendingStep:
    """A step's row that has not ended yet: what the client is shown."""

    elicitation_id: str
    message: str
    url: str
    # The store's own handle on the row (it reads it back in `end_by_client`); opaque here.
    ref: Any = field(default=None, compare=False, repr=False)


StepState = UrlOutcome | PendingStep


class StepRefused(ToolsAppError):
    """The store opens no row for this step (e.g. the principal's cap); the message says why,
    to the caller."""


class UrlStepStore(Protocol):
    """Where URL-mode steps are kept and how their end is learnt. The framework knows no rows:
    the composer hands one in with each server's lifespan state (`TenantInfo.url_steps`)."""

    async def open(
        self,
        step: UrlStep,
        *,
        tenant_id: int,
        principal: Principal,
        tool: str,
        args_digest: str,
        known_ids: list[str],
        client_address: str = "",
    ) -> StepState:
        """The row for this step of this call (the one shown, else the live one, else a new one),
        pending or how it ended. Raises `StepRefused`. ``client_address``: the caller's, which a
        caller without a token (a public tenant) is counted by."""
        ...

    async def end_by_client(self, step: PendingStep, action: str | None) -> StepState:
        """The client declined (`action` "decline") or cancelled the step; how the row stands now."""
        ...

    async def wait_for_end(self, step: PendingStep, seconds: float) -> StepState:
        """How the row stands after it ended or `seconds` passed, whichever is first."""
        ...

    def notify_session_on_end(self, elicitation_id: str, session: Any) -> None:
        """Send this 2025-11-25 session ``notifications/elicitation/complete`` when the row ends."""
        ...

    def hold_seconds(self) -> float:
        """How long a 2026-07-28 retry whose row is still pending is held open."""
        ...

    def legacy_wait_seconds(self) -> float:
        """How long a 2025-11-25 call waits in-call for the row to end."""
        ...
