"""Sign-in throttling, counted in the cache, so nobody can lock another person out:

- per (account, address): after ``MCPSITE_LOGIN_FAILURES_PER_ACCOUNT`` wrong passwords for one
  username from one client address within ``MCPSITE_LOGIN_LOCKOUT_SECONDS``, that pair is
  refused for that long. A stranger locks only their own address out of the account.
- per address: after ``MCPSITE_LOGIN_FAILURES_PER_ADDRESS`` (any usernames), the address is.
- per account, across addresses, a growing delay and never a lock: from the same number of
  failures on, each further failure makes the account wait 1, 2, 4 ... s (at most
  ``MCPSITE_LOGIN_DELAY_MAX_SECONDS``) before the next attempt from an address it has not
  signed in from. Guesses spread over many addresses are slowed; the owner at an address they
  signed in from before (their usual one) is not held up at all, and elsewhere waits seconds.

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

from mcpsite.net import address_bucket

if TYPE_CHECKING:
    from django.contrib.auth.models import User

Scope = Literal["pair", "address", "account"]

# How long an address an account signed in from stays its usual one (skips the account's delay).
USUAL_ADDRESS_SECONDS = 90 * 24 * 3600
PREFIX = "mcpsite:signin"


@dataclass(frozen=True)
class Lockout:
    scope: Scope
    until: float  # time.time()

    @property
    def message(self) -> str:
        if self.scope == "account":  # the delay: seconds, not minutes
            seconds = max(1, math.ceil(self.until - time.time()))
            when = f"{seconds} second{'s' if seconds != 1 else ''}"
            return f"Too many failed sign-ins for this account; try again in {when}."
        minutes = max(1, math.ceil((self.until - time.time()) / 60))
        when = f"{minutes} minute{'s' if minutes != 1 else ''}"
        subject = "for this account from your address" if self.scope == "pair" else "from your address"
        return f"Too many failed sign-ins {subject}; try again in {when}."


@dataclass(frozen=True)
class _Keys:
    """The cache keys of one attempt. A username may hold anything, a cache key may not: it is
    hashed, case-folded first (so may its case). Without a request (no address) the account's
    attempts pair with an address of their own, "-"."""

    account: str | None
    address: str | None

    @classmethod
    def of(cls, username: str | None, address: str | None) -> _Keys:
        account = hashlib.sha256(username.casefold().encode()).hexdigest() if username else None
        return cls(account=account, address=address)

    @property
    def pair(self) -> str | None:
        return f"{self.account}:{self.address or '-'}" if self.account else None

    def lock(self, scope: Scope) -> str | None:
        key = {"pair": self.pair, "address": self.address, "account": self.account}[scope]
        return f"{PREFIX}:lock:{scope}:{key}" if key else None

    def failures(self, scope: Scope) -> str | None:
        key = {"pair": self.pair, "address": self.address, "account": self.account}[scope]
        return f"{PREFIX}:failures:{scope}:{key}" if key else None

    @property
    def usual(self) -> str | None:
        return f"{PREFIX}:usual:{self.pair}" if self.pair else None


def _address(request: HttpRequest | None) -> str | None:
    # REMOTE_ADDR is the peer, or the client a trusted proxy names (MCPSITE_TRUSTED_PROXIES); an
    # IPv6 client counts as its /64, or every request could come from a fresh address.
    address = request.META.get("REMOTE_ADDR") if request is not None else None
    return address_bucket(address) if address else None


def signin_lockout(*, username: str | None, address: str | None) -> Lockout | None:
    """What refuses this attempt, if anything (one cache round trip): the pair's lock, the
    address's, or the account's delay unless this is an address it signed in from before."""
    keys = _Keys.of(username, address)
    scopes: tuple[Scope, ...] = ("pair", "address", "account")
    locks = {scope: keys.lock(scope) for scope in scopes}
    wanted = [key for key in (*locks.values(), keys.usual) if key]
    found = cache.get_many(wanted)
    now = time.time()
    for scope, key in locks.items():
        until = found.get(key) if key else None
        if until is None or until <= now:
            continue
        if scope == "account" and keys.usual in found:
            continue
        return Lockout(scope=scope, until=until)
    return None


def _count(key: str, period: int) -> int:
    cache.add(key, 0, timeout=period)  # the window starts at the first failure
    try:
        return int(cache.incr(key))
    except ValueError:  # expired between the two calls
        cache.set(key, 1, timeout=period)
        return 1


def signin_failure_record(*, username: str | None, address: str | None) -> None:
    """Count a failed password: the pair's or the address's count that reaches its limit starts
    its lockout; the account's, from the pair limit on, a delay doubling with each failure."""
    conf = settings.SIGNIN
    period = conf["LOCKOUT_SECONDS"]
    keys = _Keys.of(username, address)
    now = time.time()
    limits: dict[Scope, int] = {"pair": conf["FAILURES_PER_ACCOUNT"], "address": conf["FAILURES_PER_ADDRESS"]}
    for scope, limit in limits.items():
        counter, lock = keys.failures(scope), keys.lock(scope)
        if counter and lock and _count(counter, period) >= limit:
            cache.set(lock, now + period, timeout=period)
    counter, lock = keys.failures("account"), keys.lock("account")
    if counter and lock:
        beyond = _count(counter, period) - conf["FAILURES_PER_ACCOUNT"]
        if beyond >= 0:
            delay = min(float(conf["DELAY_MAX_SECONDS"]), 2.0 ** min(beyond, 32))
            cache.set(lock, now + delay, timeout=math.ceil(delay) + 1)


def signin_success_record(*, username: str, address: str | None) -> None:
    """The right password clears the pair's and the account's counts and delay (not the
    address's: an attacker's own account must not reset the budget it spends guessing others'),
    and makes the address one the account signed in from."""
    keys = _Keys.of(username, address)
    cache.delete_many([k for k in (keys.failures("pair"), keys.failures("account"), keys.lock("account")) if k])
    if keys.usual:
        cache.set(keys.usual, True, timeout=USUAL_ADDRESS_SECONDS)


class ThrottledModelBackend(ModelBackend):
    """Django's backend behind the throttle: a locked pair or address, or an account waiting out
    its delay, is refused before the password is hashed."""

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
            signin_success_record(username=username, address=address)
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
