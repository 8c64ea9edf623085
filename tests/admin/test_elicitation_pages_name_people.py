"""Staff read elicitations as people: the user's name and the OAuth application's name (not ids),
sums as fields, ids as they are, and only the sections a row has something in."""

from __future__ import annotations

import re
from datetime import timedelta
from decimal import Decimal
from typing import Any

import pytest
from django.conf import settings
from django.contrib.admin.utils import quote
from django.contrib.auth.models import User
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from oauth2_provider.models import get_application_model

from approvals.models import Elicitation, Payment
from approvals.services.opening import PaymentTerms, elicitation_open
from mcpsite.models import Tenant
from tools_app.principal import Principal

pytestmark = pytest.mark.django_db

LIST = "/admin/approvals/elicitation/"


def application(name: str) -> Any:
    return get_application_model().objects.create(
        name=name,
        client_type="public",
        authorization_grant_type="authorization-code",
        redirect_uris="http://127.0.0.1/callback",
    )


def open_row(user: User, app: Any, *, reference: str, **kwargs: Any) -> Elicitation:
    return elicitation_open(
        tenant_id=Tenant.objects.get(slug="demo").pk,
        principal=Principal(app.client_id, settings.MCPSITE["ISSUER"], str(user.pk)),
        tool=kwargs.pop("tool", "request_refund"),
        args_digest="0" * 64,
        kind=kwargs.pop("kind", Elicitation.Kind.APPROVAL),
        reference=reference,
        message="This needs a staff approval.",
        **kwargs,
    )


def staff(django_user_model: type[User]) -> Client:
    client = Client()
    client.force_login(django_user_model.objects.create_superuser("people-staff", password="people-password-1"))
    return client


def visible(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def change_page(client: Client, row: Elicitation) -> str:
    response = client.get(f"{LIST}{quote(row.pk)}/change/")
    assert response.status_code == 200
    return response.content.decode()


def test_the_list_names_the_user_and_the_application(django_user_model: type[User]) -> None:
    alice = django_user_model.objects.get(username="alice")
    row = open_row(alice, application("Claude Desktop"), reference="refund-1", amount=Decimal("25.00"), currency="EUR")
    text = visible(staff(django_user_model).get(LIST).content.decode())
    line = text[text.index(row.pk) :][:300]
    assert " alice " in line
    assert " Claude Desktop " in line
    assert " 25.00 EUR " in line
    assert row.client_id not in text


def test_the_list_names_people_with_two_queries_however_many_rows(django_user_model: type[User]) -> None:
    client = staff(django_user_model)
    alice, bob = (django_user_model.objects.get(username=name) for name in ("alice", "bob"))
    open_row(alice, application("App 0"), reference="r-0")
    with CaptureQueriesContext(connection) as one:
        assert client.get(LIST).status_code == 200
    for n in range(1, 6):
        open_row(bob if n % 2 else alice, application(f"App {n}"), reference=f"r-{n}")
    with CaptureQueriesContext(connection) as six:
        page = client.get(LIST).content.decode()
    assert len(six) == len(one)
    assert all(f"App {n}" in page for n in range(6))


def test_the_change_page_names_the_user_and_the_application_and_shows_the_refund_amount(
    django_user_model: type[User],
) -> None:
    alice = django_user_model.objects.get(username="alice")
    row = open_row(alice, application("Claude Desktop"), reference="refund-2", amount=Decimal("12.50"), currency="EUR")
    text = visible(change_page(staff(django_user_model), row))
    assert "User: alice " in text
    assert "Application: Claude Desktop " in text
    assert "Sum: 12.50 EUR " in text


def test_the_change_page_shows_the_payment_as_fields(django_user_model: type[User]) -> None:
    alice = django_user_model.objects.get(username="alice")
    row = open_row(
        alice,
        application("Claude Desktop"),
        reference="deposit-3",
        tool="pay_deposit",
        kind=Elicitation.Kind.PAYMENT,
        payment=PaymentTerms(amount=Decimal("20.00"), currency="EUR", description="the deposit"),
    )
    html = change_page(staff(django_user_model), row)
    text = visible(html)
    assert "Amount: 20.00 EUR " in text
    assert "Description: the deposit " in text
    assert "Provider: sandbox " in text
    assert 'class="inline-group"' not in html.split('id="events-group"')[0]  # no Payment inline above the audit


def test_a_pending_row_has_no_empty_sections(django_user_model: type[User]) -> None:
    alice = django_user_model.objects.get(username="alice")
    row = open_row(alice, application("Claude Desktop"), reference="refund-4")
    html = change_page(staff(django_user_model), row)
    text = visible(html.split('id="content-main"')[1])  # the page itself, not the sidebar's model list
    assert "How it ended" not in text  # nothing has ended
    assert "Webhook deliveries" not in text and "webhook deliveries" not in text  # an approval has none
    assert "Payment" not in text  # not a payment
    assert "Sum:" not in text  # no sum named
    assert "audit trail" in text.lower()  # the opening is there


def test_ids_read_as_they_are(django_user_model: type[User]) -> None:
    """`el_3Eab` is quoted `el_5F3Eab` in admin URLs; staff read it as it is on every page about it."""
    row = Elicitation.objects.create(
        id="el_3Eab_0Acd",
        tenant=Tenant.objects.get(slug="demo"),
        tool="pay_deposit",
        args_digest="0" * 64,
        reference="deposit-escape",
        kind=Elicitation.Kind.PAYMENT,
        message="Pay?",
        url="http://127.0.0.1:8000/approvals/checkout/el_3Eab_0Acd/",
        expires_at=timezone.now() + timedelta(hours=1),
    )
    Payment.objects.create(elicitation=row, amount=Decimal("1.00"), currency="EUR", provider="sandbox")
    client = staff(django_user_model)
    quoted = quote(row.pk)
    pages = [
        LIST,
        f"{LIST}{quoted}/change/",
        f"{LIST}{quoted}/history/",
        "/admin/approvals/payment/",
        f"/admin/approvals/payment/{quoted}/change/",
    ]
    for url in pages:
        response = client.get(url)
        assert response.status_code == 200, url
        text = visible(response.content.decode())
        assert "el_3Eab_0Acd" in text, url
        assert "_5F" not in text, url
