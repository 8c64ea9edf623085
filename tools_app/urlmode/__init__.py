"""URL-mode steps for tool authors: payments, staff approvals and consent, resolver style.

A resolver decorated with `url_step` returns a step (`Payment`, `Approval`, `Consent`) the way a
form resolver returns `Elicit`; the tool receives how it ended (`Completed`, `Declined`,
`Cancelled`, `Expired`) through ``Annotated[UrlOutcome, Resolve(resolver)]``. Every step is a
row kept by the registered `UrlStepStore` (`approvals` provides it: an `Elicitation`), reused by a
repeated call, so it survives restarts and is completed by a webhook, a staff decision or the user
on a page, in whichever process.

The SDK's resolvers know form questions (`Elicit`) but no URL mode, so the step rides the SDK's
own machinery and is translated at its public seams (see README, "URL-mode elicitations"):

- 2025-11-25: the resolver itself asks over the back-channel (`Context.elicit_url`, the row id as
  elicitation id), waits in-call for the row to end, else answers the SDK's
  `UrlElicitationRequiredError` (-32042); ``notifications/elicitation/complete`` follows from
  whichever process holds the session (the store's `notify_session_on_end`).
- 2026-07-28: a pending step is returned to the SDK as a private `Elicit` subclass, so it is
  batched and carried in requestState exactly like the tool's form questions, and is left in the
  call's round under the SDK wire key of the resolver that asked; the framework's round layer
  (`tools_app.rounds.RoundMiddleware`, inside the requestState boundary, told of the tools of a
  `UrlModeToolset`) swaps the request under that key for a URL-mode request on the way out,
  records the row id in the state under the same key, and takes the client's URL-mode answer out
  again on the way in. A retry whose row is still pending is held open up to
  the store's `hold_seconds()` (``APPROVALS["HOLD_SECONDS"]``) and otherwise answered with the
  request state alone.

The package: `steps` (what authors return and receive), `store` (the port to the rows),
`fulfil` (`url_step` and each generation's fulfilment), `toolset` (`UrlModeToolset`).
"""

from tools_app.urlmode.fulfil import arguments_digest, canonical_digest, url_step
from tools_app.urlmode.steps import (
    Approval,
    Cancelled,
    Completed,
    Consent,
    Declined,
    Expired,
    Payment,
    UrlOutcome,
    UrlStep,
)
from tools_app.urlmode.store import (
    PendingStep,
    StepRefused,
    StepState,
    UrlStepStore,
)
from tools_app.urlmode.toolset import UrlModeToolset

__all__ = [
    "Approval",
    "Cancelled",
    "Completed",
    "Consent",
    "Declined",
    "Expired",
    "Payment",
    "PendingStep",
    "StepRefused",
    "StepState",
    "UrlModeToolset",
    "UrlOutcome",
    "UrlStep",
    "UrlStepStore",
    "arguments_digest",
    "canonical_digest",
    "url_step",
]
