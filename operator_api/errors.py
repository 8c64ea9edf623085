"""Where the services' refusals meet the wire: one place, JSON bodies, exact statuses.

- `KeyRingRefused` -> 409 ``{"detail", "wait_seconds"}`` (and ``Retry-After`` when it says how long);
- `ElicitationNotPending` -> 409 ``{"detail", "status"}`` (someone else ended it first);
- `WrongKind`, `TenantRefused` -> 400 ``{"detail"}``;
- `InsufficientScope` -> 403 with ``WWW-Authenticate: Bearer error="insufficient_scope", scope=...``.

Every refusal (4xx) is logged here, once, with what the client was told; Django's own line
("Bad Request: /api/v1/...", which does not say why) is then not written.
"""

from __future__ import annotations

import json
import logging
import math
from typing import Any

from django.utils.log import log_response
from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from approvals.models import ElicitationNotPending
from approvals.services.ending import WrongKind
from mcpsite.keyring import KeyRingRefused
from mcpsite.services import TenantRefused
from operator_api.permissions import InsufficientScope

logger = logging.getLogger(__name__)


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    response = _response(exc, context)
    if response is not None and 400 <= response.status_code < 500:
        request = context["request"]
        log_response(
            "operator API refused %s %s: %s %s",
            request.method,
            request.path,
            response.status_code,
            json.dumps(response.data),  # ASCII: what the client sent cannot forge a log line
            response=response,
            request=request,
            logger=logger,
        )
    return response


def _response(exc: Exception, context: dict[str, Any]) -> Response | None:
    if isinstance(exc, KeyRingRefused):
        response = Response({"detail": str(exc), "wait_seconds": exc.wait_seconds}, status=status.HTTP_409_CONFLICT)
        if exc.wait_seconds is not None:
            response["Retry-After"] = str(max(1, math.ceil(exc.wait_seconds)))
        return response
    if isinstance(exc, ElicitationNotPending):
        body = {"detail": str(exc), "status": exc.elicitation.status}
        return Response(body, status=status.HTTP_409_CONFLICT)
    if isinstance(exc, (WrongKind, TenantRefused)):
        return Response({"detail": str(exc)}, status=status.HTTP_400_BAD_REQUEST)
    response = drf_exception_handler(exc, context)
    if isinstance(exc, InsufficientScope) and response is not None:
        response["WWW-Authenticate"] = f'Bearer realm="api",error="insufficient_scope",scope="{exc.scope}"'
    return response
