"""What the management commands share: naming a user or tenant that does not exist, and how to
make one, instead of Django's bare ``User matching query does not exist``."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.core.management.base import CommandError

from mcpsite.models import Tenant

SHOWN = 10  # names listed in a "which exist" hint


def _some(names: list[str], total: int) -> str:
    more = f" and {total - len(names)} more" if total > len(names) else ""
    return ", ".join(names) + more if names else "none yet"


def user_named(username: str, *, staff: bool = False) -> AbstractBaseUser:
    """The user called `username`, or a CommandError that says how to go on."""
    User = get_user_model()
    try:
        return User.objects.get(**{User.USERNAME_FIELD: username})
    except User.DoesNotExist:
        pass
    create = f".venv/bin/python manage.py createsuperuser --username {username}"
    if staff:
        existing = User.objects.filter(is_staff=True, is_active=True).order_by(User.USERNAME_FIELD)
        names = [u.get_username() for u in existing[:SHOWN]]
        raise CommandError(
            f"No user named {username!r}. Staff users: {_some(names, existing.count())}. "
            f"To make one: {create} (or in the admin: Users > Add user, then tick Staff status)."
        )
    raise CommandError(
        f"No user named {username!r}. To make one: {create}, or in the admin (Users > Add user); "
        "then make them a member of the tenant (admin: Tenants > the tenant > Members)."
    )


def tenant_named(slug: str) -> Tenant:
    """The tenant `slug`, or a CommandError naming the tenants there are."""
    try:
        return Tenant.objects.get(slug=slug)
    except Tenant.DoesNotExist:
        existing = Tenant.objects.order_by("slug")
        names = list(existing.values_list("slug", flat=True)[:SHOWN])
        raise CommandError(
            f"No tenant {slug!r}. Tenants: {_some(names, existing.count())} "
            "(the admin's Tenants page, or the operator API's POST /api/v1/tenants/, makes one)."
        ) from None
