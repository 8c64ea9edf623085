"""Who acted: one value for every audit row of ours (the key ring's steps, operator clients'
changes, an elicitation's events), instead of a user, a free-text source and a client id passed
separately and recorded three ways."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.models import AnonymousUser
from django.db import models


class Via(models.TextChoices):
    """Which way a change came. The stored values are the ones elicitation events have always
    used (an elicitation's outcome quotes them, so they stay)."""

    CLIENT = "client", "the MCP client"
    USER = "user", "the person, on a page of ours"
    STAFF = "staff", "staff, in the admin"
    API = "api", "staff, through the operator API"
    COMMAND = "command", "a management command"
    WEBHOOK = "webhook", "a payment provider's webhook"
    BEAT = "beat", "the beat"
    MIGRATION = "migration", "a data migration"


@dataclass(frozen=True)
class Actor:
    """Who acted (`user`, when a person did), which way (`via`) and, when it came through an OAuth
    client (the operator API, an MCP client), that client's id."""

    via: Via
    user: AbstractBaseUser | AnonymousUser | None = None
    oauth_client: str = ""

    @property
    def person(self) -> AbstractBaseUser | None:
        """The user who acted, when a signed-in person did."""
        return self.user if isinstance(self.user, AbstractBaseUser) and self.user.is_authenticated else None

    @property
    def user_id(self) -> Any:
        person = self.person
        return person.pk if person is not None else None

    def audit_fields(self) -> dict[str, Any]:
        """The `ActedBy` columns of an audit row."""
        return {"actor_id": self.user_id, "via": self.via, "oauth_client": self.oauth_client}


CLIENT = Actor(Via.CLIENT)
COMMAND = Actor(Via.COMMAND)


class ActedBy(models.Model):
    """The columns every audit row of ours records its `Actor` in."""

    actor = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    via = models.CharField(max_length=40, choices=Via.choices)
    oauth_client = models.CharField(
        "OAuth client", max_length=100, blank=True, help_text="The client id the change came through, if any."
    )

    class Meta:
        abstract = True
