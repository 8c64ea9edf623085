"""Staff add an endpoint in the admin: its server-generated secret is shown once, on the page
after saving, and never on its pages again; events are signed with it; "send test event" and
"rotate secret" work from the list; a URL on a private address is refused by the form."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from notifications import services
from notifications.models import Endpoint
from tests.conftest import Cast, LiveServer, sign_in_to_admin
from tests.notifications.conftest import Receiver, verify


@pytest.fixture
def receiver(receiver_factory: Callable[..., Receiver], cast: Cast) -> Iterator[Receiver]:
    receiver = receiver_factory()
    yield receiver
    for endpoint in Endpoint.objects.filter(url=receiver.url):
        services.endpoint_delete(endpoint=endpoint)


def run_action(page: Any, endpoint: Endpoint, action: str) -> None:
    page.goto(page.url.split("/admin/")[0] + "/admin/notifications/endpoint/")
    page.check(f"input[name=_selected_action][value='{endpoint.pk}']")
    page.select_option("select[name=action]", action)
    page.click("button[name=index]")


def test_an_endpoints_secret_is_shown_once_and_signs_its_events(
    server: LiveServer, cast: Cast, page: Any, receiver: Receiver
) -> None:
    sign_in_to_admin(page, server, "/admin/notifications/endpoint/add/")
    page.fill("#id_url", receiver.url)
    page.check("input[name=event_types][value='approval.pending']")
    page.click("input[name=_save]")

    shown = page.locator("#endpoint-secret").inner_text()
    endpoint = Endpoint.objects.get(url=receiver.url)
    assert (shown, endpoint.tenant, endpoint.event_types) == (endpoint.secret, None, ["approval.pending"])
    assert shown.startswith("whsec_")
    page.goto(f"{server.url}/admin/notifications/endpoint/{endpoint.pk}/change/")
    assert shown not in page.content()

    run_action(page, endpoint, "send_test_event")
    assert "1 test event(s) queued" in page.locator(".messagelist").inner_text()
    [received] = receiver.wait_for(1)
    assert verify(shown, received)["data"]["by"] == "staff"

    run_action(page, endpoint, "rotate_secret")
    rotated = page.locator("#endpoint-secret").inner_text()
    endpoint.refresh_from_db()
    assert rotated == endpoint.secret != shown
    page.goto(f"{server.url}/admin/notifications/endpoint/")
    assert rotated not in page.content()


def test_the_admin_refuses_an_endpoint_on_a_private_address(server: LiveServer, cast: Cast, page: Any) -> None:
    sign_in_to_admin(page, server, "/admin/notifications/endpoint/add/")
    page.fill("#id_url", "https://10.1.2.3/hooks")
    page.check("input[name=event_types][value='approval.pending']")
    page.click("input[name=_save]")

    assert page.locator(".field-url .errorlist").inner_text() == (
        "10.1.2.3 is a private, loopback or reserved address (10.1.2.3)."
    )
    assert not Endpoint.objects.filter(url="https://10.1.2.3/hooks").exists()
