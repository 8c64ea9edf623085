"""The same logical call is one row, one charge: the call's identity digests the arguments as the
tool's own model validated them, not the raw JSON; an argument the tool does not declare is
refused by its schema and opens nothing."""

from __future__ import annotations

from typing import Any

import pytest

from approvals.models import Elicitation
from tests.approvals.conftest import elicitation_id_of
from tests.approvals.raw import modern_call
from tests.conftest import Cast, LiveServer
from tests.mcp.clients import modern_post


def asked_url(response: dict[str, Any]) -> str:
    result = response["result"]
    assert result["resultType"] == "input_required", result
    (request,) = result["inputRequests"].values()
    return str(request["params"]["url"])


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
