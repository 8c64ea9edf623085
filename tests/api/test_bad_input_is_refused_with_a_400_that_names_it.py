"""Bad input to the operator API is a 400 that names the problem, changes nothing and is logged
once, without a traceback: a body nested deeper than any the API takes (100,000 levels used to
raise RecursionError in DRF's parser), a cursor edited by hand (its position reached the database
filter), and an age filter too large for a date (OverflowError). Each of these was a 500."""

from __future__ import annotations

import base64
import uuid

import httpx2
import pytest

from mcpsite.jsonbody import MAX_DEPTH
from mcpsite.models import Tenant
from tests.api.conftest import api, machine_client
from tests.conftest import Cast, LiveServer


def nested(levels: int) -> str:
    return "[" * levels + "]" * levels


def refused_once(server: LiveServer, response: httpx2.Response, body: dict[str, str]) -> None:
    """A 400 with `body`, and one log line of the refusal (the first WARNING or worse) saying it."""
    assert (response.status_code, response.json()) == (400, body)
    log = server.log_since_mark()
    assert "Traceback" not in log
    refusals = [line for line in log.splitlines() if " WARNING " in line or " ERROR " in line]
    assert len(refusals) == 1, log
    assert "operator API refused" in refusals[0] and "400" in refusals[0]
    assert next(iter(body.values())) in refusals[0]


@pytest.mark.parametrize("levels", [100_000, 950, MAX_DEPTH])
def test_a_body_nested_too_deeply_is_a_parse_error_and_creates_nothing(
    server: LiveServer, cast: Cast, levels: int
) -> None:
    slug = f"deep-{uuid.uuid4().hex[:6]}"
    body = f'{{"slug": "{slug}", "name": "Deep", "toolsets": {nested(levels)}}}'
    with api(server, machine_client(server, "ops", ["tenants:write"]).token) as http:
        server.mark_log()
        response = http.post("/tenants/", content=body, headers={"Content-Type": "application/json"})
    refused_once(server, response, {"detail": f"JSON parse error - JSON nested deeper than {MAX_DEPTH} levels"})
    assert not Tenant.objects.filter(slug=slug).exists()


def cursor(query: str) -> str:
    return base64.b64encode(query.encode()).decode()


@pytest.mark.parametrize(
    ("path", "tampered"),
    [
        ("/elicitations/", cursor("p=garbage")),
        ("/elicitations/", cursor("p=2026-13-45 25:00:00")),
        ("/webhook-deliveries/", cursor("p=garbage")),
        ("/tasks/", cursor("r=1&p=not-a-date")),
        ("/elicitations/", cursor("o=x")),
        ("/elicitations/", "%%%not-base64"),
    ],
)
def test_a_tampered_cursor_is_refused(server: LiveServer, cast: Cast, path: str, tampered: str) -> None:
    scopes = ["approvals:read", "tasks:read"]
    with api(server, machine_client(server, "ops", scopes).token) as http:
        server.mark_log()
        response = http.get(path, params={"cursor": tampered})
    refused_once(server, response, {"cursor": "invalid cursor: follow the next and previous links as given"})


def test_a_cursor_from_a_next_link_still_pages(server: LiveServer, cast: Cast) -> None:
    with api(server, machine_client(server, "ops", ["tenants:write"]).token) as http:
        first = http.get("/tenants/", params={"page_size": 1}).json()
        second = http.get(first["next"])
    assert second.status_code == 200
    assert second.json()["results"] and second.json()["results"] != first["results"]


@pytest.mark.parametrize("param", ["older_than", "newer_than"])
@pytest.mark.parametrize("value", ["9" * 30, "9" * 5000, "99999999999", "3153600001"])
def test_an_age_beyond_a_century_is_refused(server: LiveServer, cast: Cast, param: str, value: str) -> None:
    with api(server, machine_client(server, "ops", ["approvals:read"]).token) as http:
        server.mark_log()
        response = http.get("/elicitations/", params={param: value})
    refused_once(server, response, {param: "at most 3153600000 seconds (100 years)"})


@pytest.mark.parametrize("value", ["²", "١٢", "-5", "1e3"])
def test_an_age_that_is_not_ascii_digits_is_refused(server: LiveServer, cast: Cast, value: str) -> None:
    with api(server, machine_client(server, "ops", ["approvals:read"]).token) as http:
        server.mark_log()
        response = http.get("/elicitations/", params={"older_than": value})
    refused_once(server, response, {"older_than": "a whole number of seconds"})


def test_an_age_of_a_century_is_answered(server: LiveServer, cast: Cast) -> None:
    with api(server, machine_client(server, "ops", ["approvals:read"]).token) as http:
        response = http.get("/elicitations/", params={"older_than": "3153600000", "newer_than": "3153600000"})
    assert (response.status_code, response.json()["results"]) == (200, [])
