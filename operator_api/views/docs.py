from __future__ import annotations

import json
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from drf_spectacular.generators import SchemaGenerator

METHODS = ("get", "post", "put", "patch", "delete")


def docs(request: HttpRequest) -> HttpResponse:
    """The OpenAPI schema as a plain page: rendered here, no script, nothing fetched from elsewhere
    (the Swagger and ReDoc views load their JavaScript from a CDN)."""
    schema: dict[str, Any] = SchemaGenerator().get_schema(request=None, public=True)
    operations = [
        {"method": method.upper(), "path": path, **operation}
        for path, item in schema["paths"].items()
        for method, operation in item.items()
        if method in METHODS
    ]
    context = {"info": schema["info"], "operations": operations, "raw": json.dumps(schema, indent=2, default=str)}
    return render(request, "operator_api/docs.html", context)
