"""Resource fixtures: static text and binary, one to subscribe to, one templated."""

from __future__ import annotations

import json

from demo.tools.conformance.shared import PNG, toolset


@toolset.resource(
    "test://static-text", name="static-text", description="A static text resource", mime_type="text/plain"
)
def static_text() -> str:
    return "This is the content of the static text resource."


@toolset.resource(
    "test://static-binary", name="static-binary", description="A static binary resource (PNG)", mime_type="image/png"
)
def static_binary() -> bytes:
    return PNG


@toolset.resource(
    "test://watched-resource",
    name="watched-resource",
    description="A resource clients may subscribe to",
    mime_type="text/plain",
)
def watched_resource() -> str:
    return "Watched resource content."


@toolset.resource(
    "test://template/{id}/data", name="template-data", description="A templated resource", mime_type="application/json"
)
def template_data(id: str) -> str:  # the parameter is named after the URI template variable
    return json.dumps({"id": id, "templateTest": True, "data": f"Data for ID: {id}"}, separators=(",", ":"))
