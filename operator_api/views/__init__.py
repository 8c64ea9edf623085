"""The operator API's views: small adapters that parse input, call a service, and answer JSON.
Refusals are mapped to the wire in `operator_api.errors`."""

from __future__ import annotations

from typing import Any, TypeVar

from django.db import models
from django.db.models import QuerySet
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request

from mcpsite.actors import Actor, Via


def actor_of(request: Request) -> Actor:
    """Who acts through this request: its token's user, via the API, with the client id the token
    was issued to (named in every audit row)."""
    application: Any = getattr(request.auth, "application", None)
    return Actor(Via.API, request.user, str(application.client_id) if application is not None else "")


Rows = TypeVar("Rows", bound=QuerySet[Any])


def by_choice(rows: Rows, request: Request, param: str, choices: type[models.Choices]) -> Rows:
    """`rows` whose field `param` is the query's `param`, when given; a value outside `choices` is a
    400 naming the ones allowed."""
    value = request.query_params.get(param)
    if value is None:
        return rows
    if value not in choices.values:
        raise ValidationError({param: f"one of {', '.join(choices.values)}"})
    return rows.filter(**{param: value})
