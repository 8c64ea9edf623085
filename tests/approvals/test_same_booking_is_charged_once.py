"""The same logical call is one row, one charge: the call's identity digests the arguments as the
tool's own model validated them, not the raw JSON; an argument the tool does not declare is
refused by its schema and opens nothing. A payment is one per user and reference, whichever of
the user's OAuth clients asks: a second client is shown the same checkout, finds it on its
retry, and is not asked again once it is paid; another user has a row of their own."""

from __future__ import annotations

import uuid
from decimal import Decimal
from typing import Any

import pytest
from django.db import IntegrityError, transaction
from oauth2_provider.models import Application

from approvals.models import Elicitation
from approvals.services.opening import PaymentTerms, elicitation_open
from mcpsite import services as mcpsite_services
from tests.approvals.conftest import CallInThread, deliver, elicitation_id_of, payment_event
from tests.approvals.raw import modern_call
from tests.conftest import Cast, LiveServer
from tests.mcp.clients import MODES, modern_post
from tools_app.principal import Principal


def asked_url(response: dict[str, Any]) -> str:
    result = response["result"]
    assert result["resultType"] == "input_required", result
    (request,) = result["inputRequests"].values()
    return str(request["params"]["url"])


def client_token(server: LiveServer, cast: Cast, name: str = "alice") -> str:
    """A token for `name` through an OAuth client of its own (an assistant, a task runner, ...)."""
    client = Application.objects.create(
        name=f"client {uuid.uuid4().hex[:8]}",
        client_type=Application.CLIENT_PUBLIC,
        authorization_grant_type=Application.GRANT_AUTHORIZATION_CODE,
        redirect_uris="http://127.0.0.1/callback",
    )
    return mcpsite_services.token_issue(
        tenant=cast.tenant("demo"), user=cast.user(name), application=client, site_root=server.url
    ).token


def pay_deposit(server: LiveServer, token: str, booking: int) -> dict[str, Any]:
    return modern_call(server.mcp_url(), token, "pay_deposit", {"booking_id": booking})


def test_a_second_client_of_the_same_user_is_shown_the_same_payment(
    server: LiveServer, cast: Cast, booking: int
) -> None:
    first = asked_url(pay_deposit(server, client_token(server, cast), booking))
    second = asked_url(pay_deposit(server, client_token(server, cast), booking))

    assert second == first
    rows = Elicitation.objects.filter(reference=f"deposit-{booking}")
    assert list(rows.values_list("pk", "status")) == [(elicitation_id_of(first), "pending")]


@pytest.mark.parametrize("mode", MODES)
def test_the_second_clients_call_finishes_when_the_payment_opened_by_the_first_is_paid(
    server: LiveServer, cast: Cast, booking: int, mode: str
) -> None:
    first = elicitation_id_of(asked_url(pay_deposit(server, client_token(server, cast), booking)))
    call = CallInThread(server.mcp_url(), client_token(server, cast), mode, "pay_deposit", {"booking_id": booking})
    call.retry_after_complete = True

    shown = elicitation_id_of(call.start().next_question().url)
    assert shown == first
    deliver(server, payment_event(Elicitation.objects.get(pk=first)))
    call.join()

    assert call.text.startswith(f"Booking {booking} confirmed: deposit of 20.00 EUR paid")
    assert Elicitation.objects.filter(reference=f"deposit-{booking}").count() == 1


def test_a_payment_made_through_one_client_is_not_asked_again_through_another(
    server: LiveServer, cast: Cast, booking: int
) -> None:
    paid = Elicitation.objects.get(
        pk=elicitation_id_of(asked_url(pay_deposit(server, client_token(server, cast), booking)))
    )
    assert deliver(server, payment_event(paid)).json()["outcome"] == "completed"

    again = pay_deposit(server, client_token(server, cast), booking)["result"]

    assert again.get("resultType", "complete") == "complete", again
    (content,) = again["content"]
    assert content["text"] == (
        f"Booking {booking} confirmed: deposit of 20.00 EUR paid (receipt cs_test_{paid.pk[-6:]})."
    )
    assert list(Elicitation.objects.filter(reference=f"deposit-{booking}").values_list("pk", flat=True)) == [paid.pk]


def test_another_user_paying_the_same_booking_gets_a_payment_of_their_own(
    server: LiveServer, cast: Cast, booking: int
) -> None:
    alices = asked_url(pay_deposit(server, client_token(server, cast, "alice"), booking))
    paid = Elicitation.objects.get(pk=elicitation_id_of(alices))
    deliver(server, payment_event(paid))

    bobs = asked_url(pay_deposit(server, client_token(server, cast, "bob"), booking))

    assert bobs != alices
    bobs_row = Elicitation.objects.get(pk=elicitation_id_of(bobs))
    assert (bobs_row.subject, bobs_row.status) == (str(cast.user("bob").pk), "pending")


def test_the_database_refuses_a_second_pending_charge_of_one_reference_for_one_user(cast: Cast) -> None:
    def charge(client_id: str) -> Elicitation:
        return elicitation_open(
            tenant_id=cast.tenant("demo").pk,
            principal=Principal(client_id, "issuer", f"user-{uuid.uuid4().hex[:8]}"),
            tool="pay_deposit",
            args_digest=uuid.uuid4().hex,
            kind=Elicitation.Kind.PAYMENT,
            reference="deposit-constraint",
            message="Please pay",
            payment=PaymentTerms(amount=Decimal("20.00"), currency="EUR"),
        )

    row = charge("client-a")
    twin = Elicitation(
        tenant_id=row.tenant_id,
        client_id="client-b",
        issuer=row.issuer,
        subject=row.subject,
        tool="book_table_with_deposit",
        args_digest=uuid.uuid4().hex,
        reference=row.reference,
        kind=row.kind,
        message=row.message,
        url=row.url,
        expires_at=row.expires_at,
    )
    with pytest.raises(IntegrityError, match="one_pending_payment_per_user"), transaction.atomic():
        twin.save(force_insert=True)


def test_booking_id_1_and_string_1_and_1_point_0_reuse_one_payment(
    server: LiveServer, cast: Cast, booking: int
) -> None:
    token = cast.token(server)
    urls = {
        asked_url(modern_call(server.mcp_url(), token, "pay_deposit", {"booking_id": spelling}))
        for spelling in (booking, str(booking), float(booking))
    }

    (url,) = urls
    rows = Elicitation.objects.filter(reference=f"deposit-{booking}")
    assert list(rows.values_list("pk", flat=True)) == [elicitation_id_of(url)]


def test_an_amount_of_3_and_3_00_is_one_refund_request(server: LiveServer, cast: Cast) -> None:
    token = cast.token(server)
    urls = {
        asked_url(modern_call(server.mcp_url(), token, "request_refund", {"order_id": "SAME-3", "amount": amount}))
        for amount in ("3", "3.00", 3)
    }

    assert len(urls) == 1
    assert Elicitation.objects.filter(reference="refund-SAME-3", status=Elicitation.Status.PENDING).count() == 1


def test_an_extra_argument_is_refused_by_the_schema_and_opens_no_payment(
    server: LiveServer, cast: Cast, booking: int
) -> None:
    token = cast.token(server)
    response = modern_call(server.mcp_url(), token, "pay_deposit", {"booking_id": booking, "coupon": "FREE"})

    result = response["result"]
    assert result["isError"] is True
    (content,) = result["content"]
    assert content["text"].startswith(
        "Error executing tool pay_deposit: 1 validation error for pay_depositArguments\n"
        "coupon\n  Extra inputs are not permitted [type=extra_forbidden, input_value='FREE', input_type=str]"
    )
    assert not Elicitation.objects.filter(reference=f"deposit-{booking}").exists()


@pytest.mark.parametrize("tool", ["pay_deposit", "request_refund", "book_table_with_deposit"])
def test_the_url_mode_tools_schemas_say_no_other_arguments(server: LiveServer, cast: Cast, tool: str) -> None:
    listed = modern_post(server.mcp_url(), "tools/list", token=cast.token(server)).json()["result"]["tools"]
    (schema,) = [entry["inputSchema"] for entry in listed if entry["name"] == tool]
    assert schema["additionalProperties"] is False
