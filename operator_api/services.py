"""Machine clients of the operator API, created by staff (a command, the admin, tests)."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from oauth2_provider.generators import generate_client_secret
from oauth2_provider.models import Application

from operator_api.exceptions import OperatorApiError
from operator_api.models import OperatorClient
from operator_api.scopes import OPERATOR_SCOPES


class OperatorClientRefused(OperatorApiError):
    """No such client is created; the message says why."""


@transaction.atomic
def operator_client_create(
    *, user: AbstractBaseUser, scopes: list[str], name: str = "", created_by: AbstractBaseUser | None = None
) -> tuple[Application, str]:
    """A confidential client_credentials application acting for `user` (an active staff user) with
    `scopes` (operator scopes only). Returns it and its secret, which is stored hashed: this is
    the only time anyone sees it."""
    if not (user.is_active and getattr(user, "is_staff", False)):
        raise OperatorClientRefused(f"{user.get_username()} is not an active staff user.")
    unknown = sorted(set(scopes) - OPERATOR_SCOPES)
    if unknown or not scopes:
        raise OperatorClientRefused(
            f"Operator scopes only ({', '.join(sorted(OPERATOR_SCOPES))}); got {', '.join(unknown) or 'none'}."
        )
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
        scopes=sorted(set(scopes)),
        created_by_id=created_by.pk if created_by is not None else None,
    )
    return application, secret
