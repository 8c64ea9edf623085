"""A method an operator API endpoint does not take is answered 405 naming it, never a 500 (the
endpoint's rules name no scope for it), for an operator holding every scope and permission; a
caller without a token is still told to authenticate first."""

from __future__ import annotations

from tests.api.conftest import api, machine_client
from tests.conftest import Cast, LiveServer

UNTAKEN = [
    ("PUT", "/tenants/demo/"),
    ("GET", "/tenants/demo/members/alice/role/"),
    ("PUT", "/tenants/demo/roles/1/"),
    ("DELETE", "/keys/"),
]


def test_an_untaken_method_is_405(server: LiveServer, cast: Cast) -> None:
    with api(server, machine_client(server, "ops").token) as http:
        seen = [(m, p, (r := http.request(m, p, json={})).status_code, r.json()) for m, p in UNTAKEN]
    assert seen == [(m, p, 405, {"detail": f'Method "{m}" not allowed.'}) for m, p in UNTAKEN]


def test_an_untaken_method_without_a_token_is_401(server: LiveServer, cast: Cast) -> None:
    with api(server) as http:
        assert {http.request(m, p, json={}).status_code for m, p in UNTAKEN} == {401}
