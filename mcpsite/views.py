from __future__ import annotations

from django.http import HttpRequest, HttpResponse, JsonResponse


def healthz(request: HttpRequest) -> HttpResponse:
    return JsonResponse({"status": "ok"})
