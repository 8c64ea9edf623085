"""Sign-in throttling on /accounts/login/ and /admin/login/: after too many wrong passwords for one
account (or from one address) further attempts are refused, even with the right password, with
a message saying so, and without checking the password; other accounts and addresses go on."""

from __future__ import annotations

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

LOCKED_ACCOUNT = "Too many failed sign-ins for this account; try again in 10 minutes."
LOCKED_ADDRESS = "Too many failed sign-ins from your address; try again in 10 minutes."
WRONG = "didn't match"  # our sign-in page
ADMIN_WRONG = "Please enter the correct username and password for a staff account."
# Every test signs in from addresses of its own (the trusted proxy, here the test on loopback,
# names them), so the tests share one server and the address counts do not add up across them.
PER_ACCOUNT, PER_ADDRESS = 3, 5


@pytest.fixture(scope="module")
def server(server_factory: Callable[..., LiveServer]) -> Iterator[LiveServer]:
    server = server_factory(
        MCPSITE_LOGIN_FAILURES_PER_ACCOUNT=str(PER_ACCOUNT),
        MCPSITE_LOGIN_FAILURES_PER_ADDRESS=str(PER_ADDRESS),
        MCPSITE_LOGIN_LOCKOUT_SECONDS="600",
        MCPSITE_TRUSTED_PROXIES="127.0.0.1",
    )
    yield server
    server.stop()


@pytest.fixture
def address() -> Iterator[Callable[[], dict[str, str]]]:
    """New client addresses (as X-Forwarded-For headers); their counts are cleared afterwards
    (the servers count in the suite's Redis)."""
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


def refused_with(response: httpx2.Response, message: str) -> bool:
    return response.status_code == 200 and message in response.text.replace("&#x27;", "'")


@pytest.mark.parametrize("page", ["/accounts/login/", "/admin/login/"])
def test_after_too_many_wrong_passwords_the_account_is_refused_even_with_the_right_password(
    server: LiveServer, address: Callable[[], dict[str, str]], cast: Cast, page: str
) -> None:
    victim, bystander = new_user(cast, staff=True), new_user(cast, staff=True)
    wrong = WRONG if page == "/accounts/login/" else ADMIN_WRONG
    guesser, victims_own = address(), address()

    assert all(refused_with(sign_in(server, victim, "guess", page=page, **guesser), wrong) for _ in range(PER_ACCOUNT))
    # From any address, and whatever the case of the username.
    assert refused_with(sign_in(server, victim, victim, page=page, **victims_own), LOCKED_ACCOUNT)
    assert refused_with(sign_in(server, victim.upper(), "guess", page=page, **guesser), LOCKED_ACCOUNT)
    # Another account from the guesser's address is unaffected.
    assert sign_in(server, bystander, bystander, page=page, **guesser).status_code == 302


def test_the_lockout_is_shared_by_both_sign_in_pages(
    server: LiveServer, address: Callable[[], dict[str, str]], cast: Cast
) -> None:
    victim, guesser = new_user(cast, staff=True), address()
    for _ in range(PER_ACCOUNT):
        sign_in(server, victim, "guess", **guesser)
    assert refused_with(sign_in(server, victim, victim, page="/admin/login/", **guesser), LOCKED_ACCOUNT)


def test_a_successful_sign_in_clears_the_account_count(
    server: LiveServer, address: Callable[[], dict[str, str]], cast: Cast
) -> None:
    user = new_user(cast)
    for client in (address(), address()):  # the address counts stay below their limit
        for _ in range(PER_ACCOUNT - 1):
            assert refused_with(sign_in(server, user, "guess", **client), WRONG)
        assert sign_in(server, user, user, **client).status_code == 302


def test_after_too_many_wrong_passwords_from_one_address_it_is_refused_and_another_address_is_not(
    server: LiveServer, address: Callable[[], dict[str, str]], cast: Cast
) -> None:
    guesser = address()
    for _ in range(PER_ADDRESS):  # a different account each time: the account counts stay low
        assert refused_with(sign_in(server, f"nobody-{uuid.uuid4().hex[:8]}", "guess", **guesser), WRONG)
    user = new_user(cast)
    assert refused_with(sign_in(server, user, user, **guesser), LOCKED_ADDRESS)
    assert sign_in(server, user, user, **address()).status_code == 302


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

    assert "Too many failed sign-ins for this account" in refused.content.decode()
    assert CountingHasher.checks == limit  # refused before the hasher ran
