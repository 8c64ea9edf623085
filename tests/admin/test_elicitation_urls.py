"""Elicitation ids are `el_` + URL-safe base64, so they hold `_` and often `_` + two hex digits,
which the admin's URL quoting reads as an escape (`_3E` is `>`). Every admin URL for a row must
be built with the admin's `quote`, or the page says the row does not exist."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.utils import timezone

from approvals.models import Elicitation
from mcpsite.models import Tenant

pytestmark = pytest.mark.django_db


def test_a_row_whose_id_looks_like_an_escape_can_be_opened_and_decided(django_user_model: type[User]) -> None:
    row = Elicitation.objects.create(
        id="el_3E_5F_0Aescape",
        tenant=Tenant.objects.get(slug="demo"),
        tool="request_refund",
        args_digest="0" * 64,
        reference="refund-escape",
        kind=Elicitation.Kind.APPROVAL,
        message="Refund?",
        url="http://127.0.0.1:8000/approvals/el_3E_5F_0Aescape/",
        expires_at=timezone.now() + timedelta(hours=1),
    )
    client = Client()
    client.force_login(django_user_model.objects.create_superuser("escape-staff", password="escape-password-1"))
    changelist = client.get("/admin/approvals/elicitation/")
    assert changelist.status_code == 200
    assert "/admin/approvals/elicitation/el_5F3E_5F5F_5F0Aescape/change/" in changelist.text  # the admin's own link
    page = client.get("/admin/approvals/elicitation/el_5F3E_5F5F_5F0Aescape/change/")
    assert page.status_code == 200
    assert 'action="/admin/approvals/elicitation/el_5F3E_5F5F_5F0Aescape/decide/"' in page.text
    response = client.post(
        "/admin/approvals/elicitation/el_5F3E_5F5F_5F0Aescape/decide/", {"_cancel": "1", "note": "test"}
    )
    assert response.status_code == 302
    assert response["Location"] == "/admin/approvals/elicitation/el_5F3E_5F5F_5F0Aescape/change/"
    row.refresh_from_db()
    assert row.status == Elicitation.Status.CANCELLED
