from __future__ import annotations

from django.http import HttpRequest, HttpResponse, JsonResponse

from mcpsite.readiness import readiness_checks


def healthz(request: HttpRequest) -> HttpResponse:
    """Liveness: the process answers. Nothing is checked (a database outage is no reason to restart it)."""
    return JsonResponse({"status": "ok"})


async def readyz(request: HttpRequest) -> HttpResponse:
    """Readiness: 200 when every check passes, else 503 naming each that failed (`mcpsite.readiness`)."""
    checks = await readiness_checks()
    failing = [check.name for check in checks if not check.ok]
    body = {"status": "unready" if failing else "ready", "failing": failing, "checks": [c.as_json() for c in checks]}
    response = JsonResponse(body, status=503 if failing else 200)
    response["Cache-Control"] = "no-store"
    return response
