"""The operator API's views: small adapters that parse input, call a service, and answer JSON.
Refusals are mapped to the wire in `operator_api.errors`."""

from __future__ import annotations

from typing import Any

from rest_framework.request import Request

from mcpsite.actors import Actor, Via


def actor_of(request: Request) -> Actor:
    """Who acts through this request: its token's user, via the API, with the client id the token
    was issued to (named in every audit row)."""
    application: Any = getattr(request.auth, "application", None)
    return Actor(Via.API, request.user, str(application.client_id) if application is not None else "")
