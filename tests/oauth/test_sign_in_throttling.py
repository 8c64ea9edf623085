"""Sign-in throttling on /accounts/login/ and /admin/login/: after too many wrong passwords for one
account from one address, that pair is refused, even with the right password, with a message
saying so, and without checking the password; the owner at another address is not locked out.
Failures spread over many addresses only slow the account down (a growing delay, seconds), which
an address the owner signed in from before skips. Too many from one address refuse the address."""

from __future__ import annotations

import re
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import httpx2
import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.hashers import PBKDF2PasswordHasher
from django.core.cache import cache
from django.test import Client

from tests.conftest import Cast, LiveServer
from tests.http import csrf

LOCKED_PAIR = "Too many failed sign-ins for this account from your address; try again in 10 minutes."
LOCKED_ADDRESS = "Too many failed sign-ins from your address; try again in 10 minutes."
DELAYED = re.compile(r"Too many failed sign-ins for this account; try again in (\d+) seconds?\.")
WRONG = "didn't match"  # our sign-in page
ADMIN_WRONG = "Please enter the correct username and password for a staff account."
# Every test signs in from addresses of its own (the trusted proxy, here the test on loopback,
# names them), so the tests share one server and the address counts do not add up across them.
PER_ACCOUNT, PER_ADDRESS, DELAY_MAX = 3, 5, 4


@pytest.fixture(scope="module")
def server(server_factory: Callable[..., LiveServer]) -> Iterator[LiveServer]:
    server = server_factory(
        MCPSITE_LOGIN_FAILURES_PER_ACCOUNT=str(PER_ACCOUNT),
        MCPSITE_LOGIN_FAILURES_PER_ADDRESS=str(PER_ADDRESS),
        MCPSITE_LOGIN_LOCKOUT_SECONDS="600",
        MCPSITE_LOGIN_DELAY_MAX_SECONDS=str(DELAY_MAX),
        MCPSITE_TRUSTED_PROXIES="127.0.0.1",
    )
    yield server
    server.stop()


@pytest.fixture
def address() -> Iterator[Callable[[], dict[str, str]]]:
    """New client addresses (as X-Forwarded-For headers); their counts are cleared afterwards
    (the servers count in the suite's Redis; an account's keys are the test's own user's)."""
    made: list[str] = []

    def make() -> dict[str, str]:
        made.append(f"10.{len(made)}.{uuid.uuid4().int % 250}.{uuid.uuid4().int % 250}")
        return {"X-Forwarded-For": made[-1]}

    yield make
    cache.delete_many([f"mcpsite:signin:{kind}:address:{a}" for kind in ("failures", "lock") for a in made])


def new_user(cast: Cast, *, staff: bool = False) -> str:
    """A user of its own (the cast is shared by the whole suite); its password is its name."""
    name = f"user-{uuid.uuid4().hex[:8]}"
    get_user_model().objects.create_user(name, password=name, is_staff=staff, is_superuser=staff)
    return name


def sign_in(
    server: LiveServer, username: str, password: str, *, page: str = "/accounts/login/", **headers: str
) -> httpx2.Response:
    with httpx2.Client(base_url=server.url, headers={"Referer": f"{server.url}/", **headers}, timeout=20) as http:
        form = http.get(page)
        data = {"csrfmiddlewaretoken": csrf(form), "username": username, "password": password, "next": "/admin/"}
        return http.post(page, data=data)


def page_text(response: httpx2.Response) -> str:
    return response.text.replace("&#x27;", "'")


def refused_with(response: httpx2.Response, message: str) -> bool:
    return response.status_code == 200 and message in page_text(response)


def delay_of(response: httpx2.Response) -> int | None:
    """The seconds the account must wait, if the attempt was refused for its delay."""
    found = DELAYED.search(page_text(response)) if response.status_code == 200 else None
    return int(found.group(1)) if found else None


@pytest.mark.parametrize("page", ["/accounts/login/", "/admin/login/"])
def test_a_strangers_wrong_passwords_lock_the_account_only_at_the_strangers_address(
    server: LiveServer, address: Callable[[], dict[str, str]], cast: Cast, page: str
) -> None:
    victim, bystander = new_user(cast, staff=True), new_user(cast, staff=True)
    wrong = WRONG if page == "/accounts/login/" else ADMIN_WRONG
    stranger, usual = address(), address()
    assert sign_in(server, victim, victim, page=page, **usual).status_code == 302  # the owner's usual address

    assert all(refused_with(sign_in(server, victim, "guess", page=page, **stranger), wrong) for _ in range(PER_ACCOUNT))

    # The pair (account, stranger's address) is locked, even with the right password, whatever the case.
    assert refused_with(sign_in(server, victim, victim, page=page, **stranger), LOCKED_PAIR)
    assert refused_with(sign_in(server, victim.upper(), "guess", page=page, **stranger), LOCKED_PAIR)
    # The owner at their usual address signs in at once (no delay either); another account at
    # the stranger's address too; the pair stays locked.
    assert sign_in(server, victim, victim, page=page, **usual).status_code == 302
    assert sign_in(server, bystander, bystander, page=page, **stranger).status_code == 302
    assert refused_with(sign_in(server, victim, victim, page=page, **stranger), LOCKED_PAIR)


def test_the_owner_is_not_locked_out_by_ten_failures_from_another_address(
    server: LiveServer, address: Callable[[], dict[str, str]], cast: Cast
) -> None:
    owner, stranger, owners_own = new_user(cast), address(), address()
    for _ in range(PER_ACCOUNT):
        sign_in(server, owner, "guess", **stranger)

    refused = sign_in(server, owner, owner, **owners_own)
    wait = delay_of(refused)
    assert wait == 1, page_text(refused)[:500]  # slowed down, not locked
    time.sleep(wait)
    assert sign_in(server, owner, owner, **owners_own).status_code == 302


def test_the_pair_lock_is_shared_by_both_sign_in_pages(
    server: LiveServer, address: Callable[[], dict[str, str]], cast: Cast
) -> None:
    victim, guesser = new_user(cast, staff=True), address()
    for _ in range(PER_ACCOUNT):
        sign_in(server, victim, "guess", **guesser)
    assert refused_with(sign_in(server, victim, victim, page="/admin/login/", **guesser), LOCKED_PAIR)


def test_a_successful_sign_in_clears_the_account_count(
    server: LiveServer, address: Callable[[], dict[str, str]], cast: Cast
) -> None:
    user = new_user(cast)
    for client in (address(), address()):  # the counts stay below their limit
        for _ in range(PER_ACCOUNT - 1):
            assert refused_with(sign_in(server, user, "guess", **client), WRONG)
        assert sign_in(server, user, user, **client).status_code == 302


def test_failures_spread_across_addresses_grow_a_delay_but_never_lock(
    server: LiveServer, address: Callable[[], dict[str, str]], cast: Cast
) -> None:
    user = new_user(cast)
    for _ in range(PER_ACCOUNT - 1):  # below the limit: no delay
        assert refused_with(sign_in(server, user, "guess", **address()), WRONG)

    delays = []
    for _ in range(5):
        assert refused_with(sign_in(server, user, "guess", **address()), WRONG)  # counted
        refused = sign_in(server, user, user, **address())  # even the right password waits
        wait = delay_of(refused)
        assert wait is not None, page_text(refused)[:500]
        delays.append(wait)
        time.sleep(wait)

    assert delays == [1, 2, 4, DELAY_MAX, DELAY_MAX]  # doubling, up to the most
    assert sign_in(server, user, user, **address()).status_code == 302  # and never locked


def test_after_too_many_wrong_passwords_from_one_address_it_is_refused_and_another_address_is_not(
    server: LiveServer, address: Callable[[], dict[str, str]], cast: Cast
) -> None:
    guesser = address()
    for _ in range(PER_ADDRESS):  # a different account each time: the account counts stay low
        assert refused_with(sign_in(server, f"nobody-{uuid.uuid4().hex[:8]}", "guess", **guesser), WRONG)
    user = new_user(cast)
    assert refused_with(sign_in(server, user, user, **guesser), LOCKED_ADDRESS)
    assert sign_in(server, user, user, **address()).status_code == 302


def test_fresh_ipv6_addresses_of_one_64_count_as_one_address(server: LiveServer, cast: Cast) -> None:
    """An IPv6 host holds a whole /64: a new address per attempt must not buy a new budget."""
    prefix = f"2001:db8:{uuid.uuid4().int % 0xFFFF:x}:{uuid.uuid4().int % 0xFFFF:x}"
    try:
        for n in range(PER_ADDRESS):
            headers = {"X-Forwarded-For": f"{prefix}::{n + 1:x}"}
            assert refused_with(sign_in(server, f"nobody-{uuid.uuid4().hex[:8]}", "guess", **headers), WRONG)
        user = new_user(cast)
        assert refused_with(sign_in(server, user, user, **{"X-Forwarded-For": f"{prefix}::beef"}), LOCKED_ADDRESS)
        assert sign_in(server, user, user, **{"X-Forwarded-For": f"2001:db8:ffff:{n}::1"}).status_code == 302
    finally:
        cache.delete_many([f"mcpsite:signin:{kind}:address:{prefix}::/64" for kind in ("failures", "lock")])


class CountingHasher(PBKDF2PasswordHasher):
    """Django's own PBKDF2 hasher, counting how often a password is checked."""

    checks = 0

    def verify(self, password: str, encoded: str) -> bool:
        CountingHasher.checks += 1
        return super().verify(password, encoded)


@pytest.mark.django_db
def test_a_refused_attempt_does_not_check_the_password(settings: Any) -> None:
    """The password hasher holds the thread Django's views share with the MCP path's database
    calls; a refused attempt must not run it (it then costs a cache look-up, not the hash)."""
    settings.PASSWORD_HASHERS = ["tests.oauth.test_sign_in_throttling.CountingHasher"]
    CountingHasher.checks = 0
    name = f"user-{uuid.uuid4().hex[:8]}"
    get_user_model().objects.create_user(name, password=name)
    browser = Client(REMOTE_ADDR=f"10.250.{uuid.uuid4().int % 250}.{uuid.uuid4().int % 250}")
    limit = settings.SIGNIN["FAILURES_PER_ACCOUNT"]
    for _ in range(limit):
        browser.post("/accounts/login/", {"username": name, "password": "guess"})
    assert CountingHasher.checks == limit

    refused = browser.post("/accounts/login/", {"username": name, "password": name})

    assert "Too many failed sign-ins for this account from your address" in refused.content.decode()
    assert CountingHasher.checks == limit  # refused before the hasher ran
