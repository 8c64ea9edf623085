"""Staff see a delivery's attempts (status, excerpt, duration) in the admin, in headless Chromium;
a signed-in user who is not staff, and an anonymous one, are refused the pages."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx2
from django.contrib.admin.utils import quote

from notifications import services
from notifications.models import Delivery, Endpoint
from tests.approvals.conftest import sign_in_page
from tests.conftest import Cast, LiveServer, sign_in_to_admin
from tests.notifications.conftest import Receiver, wait_for_status

STAFF_ONLY = (
    "Please enter the correct username and password for a staff account. Note that both fields may be case-sensitive."
)


def delivered_after_a_500(cast: Cast, receiver_factory: Callable[..., Receiver], endpoint_factory: Any) -> Delivery:
    receiver = receiver_factory(answers=[500])
    endpoint: Endpoint = endpoint_factory(receiver, [], slug=None)
    return wait_for_status(services.endpoint_send_test(endpoint=endpoint), Delivery.Status.DELIVERED)


def test_staff_see_a_deliverys_attempts_in_the_admin(
    server: LiveServer,
    cast: Cast,
    page: Any,
    receiver_factory: Callable[..., Receiver],
    endpoint_factory: Callable[..., Endpoint],
) -> None:
    delivery = delivered_after_a_500(cast, receiver_factory, endpoint_factory)
    path = f"/admin/notifications/delivery/{quote(delivery.pk)}/change/"

    sign_in_to_admin(page, server, path)

    rows = page.locator("#attempt_rows-group tbody tr.has_original")
    assert rows.count() == 2
    assert [rows.nth(i).locator("td.field-status_code").inner_text() for i in range(2)] == ["500", "200"]
    assert rows.nth(1).locator("td.field-response_excerpt").inner_text() == "ok"
    assert page.locator(".field-status .readonly").inner_text() == "delivered"
    assert delivery.endpoint.secret not in page.content()
    assert page.locator("input[name=_save]").count() == 0  # read-only

    page.goto(f"{server.url}/admin/notifications/delivery/?status__exact=delivered&event_type=notification.test")
    assert page.locator(f"text={delivery.pk}").count() == 1
    page.goto(f"{server.url}/admin/notifications/attempt/?q={delivery.pk}")
    assert page.locator("#result_list tbody tr").count() == 2


def test_a_user_who_is_not_staff_is_refused_the_delivery_pages(
    server: LiveServer,
    cast: Cast,
    page: Any,
    receiver_factory: Callable[..., Receiver],
    endpoint_factory: Callable[..., Endpoint],
) -> None:
    delivery = delivered_after_a_500(cast, receiver_factory, endpoint_factory)
    path = f"/admin/notifications/delivery/{quote(delivery.pk)}/change/"

    anonymous = httpx2.get(f"{server.url}{path}", follow_redirects=False, timeout=10)
    assert (anonymous.status_code, anonymous.headers["location"]) == (302, f"/admin/login/?next={path}")

    page.goto(f"{server.url}/admin/login/?next={path}")
    page.fill("#id_username", "alice")
    page.fill("#id_password", "alice-password-1")
    page.click("input[type=submit]")
    assert page.locator(".errornote").inner_text() == STAFF_ONLY

    sign_in_page(page, server, "alice", "alice-password-1")  # signed in on the site, still not staff
    for refused in (path, "/admin/notifications/attempt/", "/admin/notifications/endpoint/"):
        page.goto(f"{server.url}{refused}")
        assert page.url.startswith(f"{server.url}/admin/login/?next="), page.url
        assert delivery.pk not in page.content()
