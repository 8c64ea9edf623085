"""One person cannot open pending rows without end: beyond
``MCPSITE_APPROVALS_MAX_PENDING_PER_PRINCIPAL`` unfinished steps at a tenant, a call that would
open another gets a tool error and opens nothing. A repeat of an open call still reuses its row.
The cap is per person and tenant, across the person's OAuth clients (a fresh client registration
is not a fresh cap): other users are unaffected. Callers without a token (a public tenant) are
counted per client address (an IPv6 client by its /64)."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from datetime import timedelta
from typing import Any

import pytest
from django.db.models import F
from oauth2_provider.models import Application

from approvals.models import Elicitation
from mcpsite import services
from mcpsite.models import Tenant
from tests.approvals.raw import modern_call
from tests.conftest import Cast, LiveServer
from tests.mcp.clients import wait_until_served

CAP = 2
REFUSED = (
    f"Error executing tool request_refund: You have {CAP} unfinished payments, approvals or consents here, "
    "the most allowed at once. Finish or cancel one, or wait for one to expire, then call again."
)


@pytest.fixture(scope="module")
def capped(server_factory: Callable[..., LiveServer], payments_enabled: None) -> Iterator[LiveServer]:
    # The test stands in for a trusted proxy on loopback, so X-Forwarded-For names the client.
    server = server_factory(MCPSITE_APPROVALS_MAX_PENDING_PER_PRINCIPAL=str(CAP), MCPSITE_TRUSTED_PROXIES="127.0.0.1")
    yield server
    server.stop()


@pytest.fixture(autouse=True)
def nothing_pending_at_demo(cast: Cast) -> None:
    """Every test starts with no unfinished step at `demo`: the cap counts a person's rows from
    every client, other tests' included. Made stale, not ended: a stale row must not count."""
    Elicitation.objects.filter(tenant__slug="demo").pending().update(
        expires_at=F("created_at") + timedelta(milliseconds=1)
    )


def principal_token(server: LiveServer, cast: Cast, name: str) -> str:
    """A token for `name` through an OAuth client of its own."""
    client = Application.objects.create(
        name=f"cap test {uuid.uuid4().hex[:8]}",
        client_type=Application.CLIENT_CONFIDENTIAL,
        authorization_grant_type=Application.GRANT_CLIENT_CREDENTIALS,
    )
    tenant = cast.tenant("demo")
    return services.token_issue(tenant=tenant, user=cast.user(name), application=client, site_root=server.url).token


def refund(server: LiveServer, token: str, order_id: str) -> dict[str, Any]:
    return dict(modern_call(server.mcp_url(), token, "request_refund", {"order_id": order_id, "amount": "5"})["result"])


def test_beyond_the_cap_a_call_gets_a_tool_error_and_opens_no_row(capped: LiveServer, cast: Cast) -> None:
    tag = uuid.uuid4().hex[:8]
    alice = principal_token(capped, cast, "alice")
    opened = [refund(capped, alice, f"{tag}-{i}") for i in range(CAP)]
    assert [result["resultType"] for result in opened] == ["input_required"] * CAP

    refused = refund(capped, alice, f"{tag}-over")
    assert (refused["isError"], refused["content"]) == (True, [{"type": "text", "text": REFUSED}])
    assert not Elicitation.objects.filter(reference=f"refund-{tag}-over").exists()
    assert Elicitation.objects.filter(reference__startswith=f"refund-{tag}-").count() == CAP

    # A repeat of an open call is not a new row: it still gets its link.
    assert refund(capped, alice, f"{tag}-0")["inputRequests"] == opened[0]["inputRequests"]


def test_the_cap_follows_the_person_across_oauth_clients(capped: LiveServer, cast: Cast) -> None:
    tag = uuid.uuid4().hex[:8]
    assistant, runner = principal_token(capped, cast, "alice"), principal_token(capped, cast, "alice")
    assert refund(capped, assistant, f"{tag}-0")["resultType"] == "input_required"
    assert refund(capped, runner, f"{tag}-1")["resultType"] == "input_required"

    fresh = principal_token(capped, cast, "alice")  # a client registered just to get a fresh cap
    refused = refund(capped, fresh, f"{tag}-over")
    assert (refused["isError"], refused["content"]) == (True, [{"type": "text", "text": REFUSED}])
    assert not Elicitation.objects.filter(reference=f"refund-{tag}-over").exists()


def test_another_user_of_the_tenant_is_not_held_back(capped: LiveServer, cast: Cast) -> None:
    tag = uuid.uuid4().hex[:8]
    alice = principal_token(capped, cast, "alice")
    for i in range(CAP):
        refund(capped, alice, f"{tag}-alice-{i}")
    assert refund(capped, principal_token(capped, cast, "alice"), f"{tag}-alice-over")["isError"] is True

    assert refund(capped, principal_token(capped, cast, "bob"), f"{tag}-bob")["resultType"] == "input_required"


def test_a_row_past_its_expiry_no_longer_counts(capped: LiveServer, cast: Cast) -> None:
    tag = uuid.uuid4().hex[:8]
    alice = principal_token(capped, cast, "alice")
    for i in range(CAP):
        refund(capped, alice, f"{tag}-{i}")
    # Stale but not yet expired by the beat: it must not hold the place meanwhile.
    Elicitation.objects.filter(reference=f"refund-{tag}-0").update(
        expires_at=F("created_at") + timedelta(milliseconds=1)
    )

    assert refund(capped, alice, f"{tag}-next")["resultType"] == "input_required"


def test_anonymous_callers_of_a_public_tenant_are_capped_per_address(capped: LiveServer, cast: Cast) -> None:
    tenant, _ = Tenant.objects.get_or_create(
        slug="open-shop", defaults={"name": "Open shop", "toolsets": ["payments"], "public": True}
    )
    url, tag = capped.mcp_url(tenant.slug), uuid.uuid4().hex[:8]

    wait_until_served(url)

    def anonymous_refund(order_id: str, address: str) -> dict[str, Any]:
        arguments = {"order_id": order_id, "amount": "5"}
        forwarded = {"X-Forwarded-For": address}
        return dict(modern_call(url, "", "request_refund", arguments, capabilities=None, **forwarded)["result"])

    for host in range(1, CAP + 1):  # any address of one IPv6 /64 is the same caller
        assert anonymous_refund(f"{tag}-{host}", f"2001:db8:5:1::{host}")["resultType"] == "input_required"
    refused = anonymous_refund(f"{tag}-over", "2001:db8:5:1::99")
    assert (refused["isError"], refused["content"]) == (True, [{"type": "text", "text": REFUSED}])
    assert anonymous_refund(f"{tag}-elsewhere", "198.51.100.9")["resultType"] == "input_required"
