"""The operator API's views: small adapters that parse input, call a service, and answer JSON.
Refusals are mapped to the wire in `operator_api.errors`."""

from __future__ import annotations

from typing import Any

from rest_framework.request import Request


def oauth_client_of(request: Request) -> str:
    """The client id the request's token was issued to (named in every audit row)."""
    application: Any = getattr(request.auth, "application", None)
    return str(application.client_id) if application is not None else ""
