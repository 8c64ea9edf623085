"""Form elicitations must never ask for secrets (MCP spec, elicitation: "Servers MUST NOT use
form mode to request sensitive information"). Such a question is a URL-mode step instead."""

from __future__ import annotations

import functools
import re
import typing
from collections.abc import Callable
from typing import Any, get_args, get_origin

from mcp.server.mcpserver.resolve import Elicit as SdkElicit
from mcp.server.mcpserver.resolve import find_resolved_parameters
from pydantic import BaseModel

from tools_app.exceptions import ToolsAppError

_SECRET_WORDS = (
    "password",
    "passwd",
    "passphrase",
    "secret",
    "token",
    "apikey",
    "accesskey",
    "privatekey",
    "cardnumber",
    "creditcard",
    "cvv",
    "cvc",
    "ssn",
    "pin",
)


class UnsafeElicitation(ToolsAppError, TypeError):
    """A form elicitation whose schema asks for a secret."""

    def __init__(self, *, field: str, where: str) -> None:
        super().__init__(
            f"{where}: form elicitation field {field!r} asks for a secret; never ask for passwords, "
            "tokens, API keys or card numbers in a form (use a URL-mode step)"
        )
        self.field = field
        self.where = where


def _normalized(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.lower())


def _looks_secret(text: str) -> bool:
    normalized = _normalized(text)
    return any(word == normalized or (len(word) > 3 and word in normalized) for word in _SECRET_WORDS)


def check_form_schema(schema: type[BaseModel], *, where: str) -> None:
    """Raise `UnsafeElicitation` if any field of `schema` looks like it asks for a secret."""
    field = _secret_field(schema)
    if field is not None:
        raise UnsafeElicitation(field=field, where=where)


@functools.cache
def _secret_field(schema: type[BaseModel]) -> str | None:
    """The first field that asks for a secret; once per schema class, since `Elicit` is built on
    every round a resolver asks."""
    for name, field in schema.model_fields.items():
        labels = [name, field.alias or "", field.title or ""]
        extra = field.json_schema_extra if isinstance(field.json_schema_extra, dict) else {}
        if extra.get("format") == "password" or any(label and _looks_secret(label) for label in labels):
            return name
    return None


def _elicit_schemas(annotation: Any) -> list[type[BaseModel]]:
    arms = get_args(annotation) if get_origin(annotation) in (typing.Union, type(int | str)) else (annotation,)
    schemas = []
    for arm in arms:
        origin = get_origin(arm)
        if isinstance(origin, type) and issubclass(origin, SdkElicit):
            (schema,) = get_args(arm)
            if isinstance(schema, type) and issubclass(schema, BaseModel):
                schemas.append(schema)
    return schemas


def check_resolvers(fn: Callable[..., Any], *, where: str) -> None:
    """Walk `fn`'s resolver DAG and check every form schema its resolvers declare (`-> T | Elicit[Form]`)."""
    seen: set[int] = set()
    pending = [marker.fn for marker, _ in find_resolved_parameters(fn).values()]
    while pending:
        resolver = pending.pop()
        if id(resolver) in seen:
            continue
        seen.add(id(resolver))
        try:
            hints = typing.get_type_hints(resolver, include_extras=True)
        except Exception:
            hints = {}
        name = getattr(resolver, "__qualname__", repr(resolver))
        for schema in _elicit_schemas(hints.get("return")):
            check_form_schema(schema, where=f"{where} (resolver {name})")
        pending.extend(marker.fn for marker, _ in find_resolved_parameters(resolver).values())
