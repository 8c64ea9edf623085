"""Sign-in throttling: failed passwords are counted per username and per client address in the
cache; past ``MCPSITE_LOGIN_FAILURES_PER_ACCOUNT`` / ``..._PER_ADDRESS`` within
``MCPSITE_LOGIN_LOCKOUT_SECONDS``, further attempts are refused for that long.

A refused attempt never runs the password hasher: that is the point. The hasher takes a
thread for a long moment, and Django's sync views share one thread with the MCP path's
``database_sync_to_async``, so a password-guessing loop also slowed every MCP call.

The check lives in the authentication backend, so every password check is throttled (the sign-in
form, the admin's, anything calling ``authenticate``); the forms look first to say why.
"""

from __future__ import annotations

import hashlib
import math
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from asgiref.sync import sync_to_async
from django.conf import settings
from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.forms import AuthenticationForm
from django.core.cache import cache
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import HttpRequest

if TYPE_CHECKING:
    from django.contrib.auth.models import User

Scope = Literal["account", "address"]


@dataclass(frozen=True)
class Lockout:
    scope: Scope
    until: float  # time.time()

    @property
    def message(self) -> str:
        minutes = max(1, math.ceil((self.until - time.time()) / 60))
        when = f"{minutes} minute{'s' if minutes != 1 else ''}"
        subject = "for this account" if self.scope == "account" else "from your address"
        return f"Too many failed sign-ins {subject}; try again in {when}."


def _keys(username: str | None, address: str | None) -> dict[Scope, str]:
    keys: dict[Scope, str] = {}
    if username:
        # Hashed: a username may hold anything, a cache key may not. Case-folded: so may its case.
        keys["account"] = hashlib.sha256(username.casefold().encode()).hexdigest()
    if address:
        keys["address"] = address
    return keys


def _address(request: HttpRequest | None) -> str | None:
    # REMOTE_ADDR is the peer, or the client a trusted proxy names (MCPSITE_TRUSTED_PROXIES).
    return request.META.get("REMOTE_ADDR") if request is not None else None


def signin_lockout(*, username: str | None, address: str | None) -> Lockout | None:
    """The lockout in force for this username or address, if any (one cache round trip)."""
    keys = _keys(username, address)
    found = cache.get_many([f"mcpsite:signin:lock:{scope}:{key}" for scope, key in keys.items()])
    for scope, key in keys.items():
        until = found.get(f"mcpsite:signin:lock:{scope}:{key}")
        if until is not None and until > time.time():
            return Lockout(scope=scope, until=until)
    return None


def signin_failure_record(*, username: str | None, address: str | None) -> None:
    """Count a failed password; the count that reaches a limit starts a lockout."""
    period = settings.SIGNIN["LOCKOUT_SECONDS"]
    limits: dict[Scope, int] = {
        "account": settings.SIGNIN["FAILURES_PER_ACCOUNT"],
        "address": settings.SIGNIN["FAILURES_PER_ADDRESS"],
    }
    for scope, key in _keys(username, address).items():
        counter = f"mcpsite:signin:failures:{scope}:{key}"
        cache.add(counter, 0, timeout=period)  # the window starts at the first failure
        try:
            failures = cache.incr(counter)
        except ValueError:  # expired between the two calls
            cache.set(counter, failures := 1, timeout=period)
        if failures >= limits[scope]:
            cache.set(f"mcpsite:signin:lock:{scope}:{key}", time.time() + period, timeout=period)


def signin_success_record(*, username: str) -> None:
    """The right password clears the account's count (not the address's: an attacker's own
    account must not reset the budget it spends guessing others')."""
    cache.delete(f"mcpsite:signin:failures:account:{_keys(username, None)['account']}")


class ThrottledModelBackend(ModelBackend):
    """Django's backend behind the throttle: a locked-out username or address is refused before
    the password is hashed."""

    def authenticate(
        self, request: HttpRequest | None, username: str | None = None, password: str | None = None, **kwargs: Any
    ) -> User | None:
        if username is None:
            username = kwargs.get(get_user_model().USERNAME_FIELD)
        address = _address(request)
        if signin_lockout(username=username, address=address) is not None:
            raise PermissionDenied  # authenticate() stops here: no other backend, no hasher
        user = super().authenticate(request, username=username, password=password, **kwargs)
        if user is None:
            signin_failure_record(username=username, address=address)
        elif username is not None:
            signin_success_record(username=username)
        return user

    async def aauthenticate(
        self, request: HttpRequest | None, username: str | None = None, password: str | None = None, **kwargs: Any
    ) -> User | None:
        # ModelBackend's async twin checks the password itself; route it through the throttle.
        return await sync_to_async(self.authenticate)(request, username=username, password=password, **kwargs)


class ThrottledFormMixin:
    """Says why a locked-out attempt is refused, instead of "wrong password"."""

    request: HttpRequest | None
    cleaned_data: dict[str, Any]

    def clean(self) -> dict[str, Any]:
        lockout = signin_lockout(username=self.cleaned_data.get("username"), address=_address(self.request))
        if lockout is not None:
            raise ValidationError(lockout.message, code="throttled")
        return super().clean()  # type: ignore[misc]


class SigninForm(ThrottledFormMixin, AuthenticationForm):
    pass


class AdminSigninForm(ThrottledFormMixin, AdminAuthenticationForm):
    pass
