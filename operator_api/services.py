"""Machine clients of the operator API, created and changed by staff (a command, the admin, tests).

A machine client's token acts with its operator's permissions (`operator_api.auth`), so whoever
sets its user or its secret, or widens what it may do, acts as that operator: such a change
needs the operator-API permission and every permission of the client's operator, before and
after (`operator_client_change`), and is audited.
"""

from __future__ import annotations

from collections.abc import Iterable

from django.contrib.auth.models import AbstractBaseUser, AbstractUser, AnonymousUser
from django.db import transaction
from oauth2_provider.generators import generate_client_secret
from oauth2_provider.models import AccessToken, Application, RefreshToken

from mcpsite.actors import Actor
from operator_api.exceptions import OperatorApiError
from operator_api.models import OperatorClient, OperatorClientEvent
from operator_api.scopes import OPERATOR_SCOPES

# What says whom an operator client acts for, and how it proves it is that client.
GUARDED_FIELDS = ("user", "client_id", "client_secret", "hash_client_secret", "client_type", "authorization_grant_type")
CHANGE_PERMISSION = "operator_api.change_operatorclient"


class OperatorClientRefused(OperatorApiError):
    """No such client is created or changed; the message says why."""


def _check_scopes(scopes: Iterable[str]) -> list[str]:
    scopes = list(scopes)
    unknown = sorted(set(scopes) - OPERATOR_SCOPES)
    if unknown or not scopes:
        raise OperatorClientRefused(
            f"Operator scopes only ({', '.join(sorted(OPERATOR_SCOPES))}); got {', '.join(unknown) or 'none'}."
        )
    return sorted(set(scopes))


def _check_operator(user: AbstractBaseUser | None) -> AbstractBaseUser:
    if user is None or not (user.is_active and getattr(user, "is_staff", False)):
        raise OperatorClientRefused(f"{user.get_username() if user else 'Nobody'} is not an active staff user.")
    return user


def _holds_all_of(actor: AbstractUser, user: AbstractBaseUser | None) -> bool:
    """Whether `actor` holds every permission `user` has (a superuser's only a superuser holds)."""
    if user is None or actor.is_superuser:
        return True
    if getattr(user, "is_superuser", False):
        return False
    return set(getattr(user, "get_all_permissions", set)()) <= actor.get_all_permissions()


@transaction.atomic
def operator_client_create(
    *, user: AbstractBaseUser, scopes: list[str], name: str = "", created_by: AbstractBaseUser | None = None
) -> tuple[Application, str]:
    """A confidential client_credentials application acting for `user` (an active staff user) with
    `scopes` (operator scopes only). Returns it and its secret, which is stored hashed: this is
    the only time anyone sees it. `created_by` (when a person, not a shell, asks) must hold every
    permission of `user`, as for a change."""
    _check_operator(user)
    if isinstance(created_by, AbstractUser) and not _holds_all_of(created_by, user):
        raise OperatorClientRefused(
            f"{user.get_username()} holds permissions {created_by.get_username()} does not: a machine client acts "
            "with all of its operator's, so only someone holding them may make one."
        )
    scopes = _check_scopes(scopes)
    secret = generate_client_secret()
    application = Application.objects.create(
        name=name or f"operator client of {user.get_username()}",
        user=user,
        client_type=Application.CLIENT_CONFIDENTIAL,
        authorization_grant_type=Application.GRANT_CLIENT_CREDENTIALS,
        client_secret=secret,
        skip_authorization=True,
    )
    OperatorClient.objects.create(
        application=application,
        scopes=scopes,
        created_by_id=created_by.pk if created_by is not None else None,
    )
    return application, secret


def operator_client_changes(
    *, actor: AbstractBaseUser | AnonymousUser, before: Application, after: Application, scopes: list[str] | None = None
) -> list[str]:
    """The guarded fields `after` changes on the operator client `before` (and "scopes"), once it
    is sure `actor` may change them. Raises `OperatorClientRefused`, naming what is missing.

    1. Nothing guarded changes: anyone the admin lets edit the application may (its name, say).
    2. Else the actor is an active staff user holding ``operator_api.change_operatorclient``,
    3. holds every permission of the client's operator before and after (a token of the client
       acts as them: setting a secret on a superuser's client is acting as the superuser),
    4. and the operator after is an active staff user; new scopes are operator scopes.
    """
    changed = [name for name in GUARDED_FIELDS if before.serializable_value(name) != after.serializable_value(name)]
    if scopes is not None and _check_scopes(scopes) != sorted(before.operator.scopes):
        changed.append("scopes")
    if not changed:
        return []
    if not isinstance(actor, AbstractUser) or not (actor.is_active and actor.is_staff):
        raise OperatorClientRefused(f"{actor} is not an active staff user.")
    if not actor.has_perm(CHANGE_PERMISSION):
        raise OperatorClientRefused(
            f"Changing an operator client's {', '.join(changed)} needs the {CHANGE_PERMISSION!r} permission, "
            f"which {actor.get_username()} lacks."
        )
    for operator in {before.user, after.user}:
        if not _holds_all_of(actor, operator):
            raise OperatorClientRefused(
                f"{operator.get_username() if operator else '-'} holds permissions {actor.get_username()} does not: "
                "a machine client acts with all of its operator's, so only someone holding them may change it."
            )
    _check_operator(after.user)
    return changed


def _describe(before: Application, after: Application, changed: list[str], scopes: list[str] | None) -> str:
    notes = []
    for name in changed:
        if name == "user":
            notes.append(f"user {before.user} -> {after.user}")
        elif name == "client_secret":
            notes.append("secret set")
        elif name == "scopes":
            notes.append(f"scopes {' '.join(before.operator.scopes)} -> {' '.join(scopes or [])}")
        else:
            notes.append(f"{name} {before.serializable_value(name)} -> {after.serializable_value(name)}")
    return "; ".join(notes)


@transaction.atomic
def operator_client_change(
    *,
    application: Application,
    actor: Actor,
    scopes: list[str] | None = None,
) -> list[str]:
    """Save an operator client's `application` as `actor` edited it (in memory), and its `scopes`
    if given; returns the guarded fields that changed (`operator_client_changes` says who may).

    A guarded change is audited (`OperatorClientEvent`) and revokes the client's tokens: a token
    minted before acts for the client's old operator and secret, and must not act for the new.
    """
    before = (
        Application.objects.select_for_update(of=("self",)).select_related("user", "operator").get(pk=application.pk)
    )
    changed = operator_client_changes(
        actor=actor.user or AnonymousUser(), before=before, after=application, scopes=scopes
    )
    application.save()
    if not changed:
        return []
    if "scopes" in changed:
        OperatorClient.objects.filter(pk=application.pk).update(scopes=_check_scopes(scopes or []))
    for refresh in RefreshToken.objects.filter(application=application, revoked__isnull=True):
        refresh.revoke()
    for access in AccessToken.objects.filter(application=application):
        access.revoke()
    OperatorClientEvent.objects.create(
        application=application,
        client_id=application.client_id,
        changed=changed,
        note=_describe(before, application, changed, scopes),
        **actor.audit_fields(),
    )
    return changed
