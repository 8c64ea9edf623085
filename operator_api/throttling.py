from __future__ import annotations

from typing import Any

from rest_framework.request import Request
from rest_framework.throttling import SimpleRateThrottle


class PerPrincipal(SimpleRateThrottle):
    """``OPERATOR_API["RATE"]`` per principal: the OAuth client and the user it acts for (two
    pipelines of one operator are counted apart); anonymous requests per client address."""

    scope = "operator"

    def get_cache_key(self, request: Request, view: Any) -> str:
        token = request.auth
        if token is not None and getattr(token, "application_id", None) is not None:
            ident = f"{token.application_id}:{getattr(request.user, 'pk', '')}"
        else:
            ident = self.get_ident(request)
        return self.cache_format % {"scope": self.scope, "ident": ident}
