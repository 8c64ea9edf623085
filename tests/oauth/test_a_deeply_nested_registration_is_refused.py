"""A registration (or an RFC 7592 update) whose JSON nests deeper than any client metadata is
refused with 400 invalid_client_metadata saying so, registers nothing and is logged once; 100,000
levels used to raise RecursionError in the registration view (a 500 with a traceback)."""

from __future__ import annotations

import httpx2
import pytest
from django.core.cache import cache
from oauth2_provider.models import Application

from mcpsite.jsonbody import MAX_DEPTH
from tests.conftest import Cast, LiveServer
from tests.oauth.browser import CALLBACK
from tests.oauth.helpers import register_client

REFUSED = {"error": "invalid_client_metadata", "error_description": f"JSON nested deeper than {MAX_DEPTH} levels."}


@pytest.fixture(autouse=True)
def registrations_allowed() -> None:
    cache.delete("mcpsite:dcr:127.0.0.1")  # the suite registers many clients from this address


def metadata_nested(levels: int) -> bytes:
    nested = "[" * levels + "]" * levels
    return (
        f'{{"client_name": "deep", "application_type": "native", "redirect_uris": ["{CALLBACK}"],'
        f' "contacts": {nested}}}'
    ).encode()


@pytest.mark.parametrize("levels", [100_000, MAX_DEPTH])
def test_a_registration_nested_too_deeply_is_refused(live: LiveServer, cast: Cast, levels: int) -> None:
    before = Application.objects.count()
    live.mark_log()

    response = httpx2.post(
        f"{live.url}/o/register/",
        content=metadata_nested(levels),
        headers={"Content-Type": "application/json"},
        timeout=10,
    )

    assert (response.status_code, response.json()) == (400, REFUSED)
    assert Application.objects.count() == before
    log = live.log_since_mark()
    assert "Traceback" not in log
    refusals = [line for line in log.splitlines() if " WARNING " in line or " ERROR " in line]
    assert len(refusals) == 1, log
    assert refusals[0].endswith(f"client registration refused: {REFUSED['error_description']}")


def test_an_update_nested_too_deeply_is_refused(live: LiveServer, cast: Cast) -> None:
    registered = register_client(live).json()
    management = {"Authorization": f"Bearer {registered['registration_access_token']}"}

    response = httpx2.put(
        registered["registration_client_uri"],
        content=metadata_nested(100_000),
        headers={"Content-Type": "application/json", **management},
        timeout=10,
    )

    assert (response.status_code, response.json()) == (400, REFUSED)
    assert Application.objects.get(client_id=registered["client_id"]).name == "test client"
