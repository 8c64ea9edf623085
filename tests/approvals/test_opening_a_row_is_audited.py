"""A row's audit trail starts when it is opened: who asked (the client's call), as pending."""

from __future__ import annotations

import pytest
from django.conf import settings
from django.contrib.auth.models import User

from approvals.models import Elicitation, ElicitationEvent
from approvals.services.opening import elicitation_open
from mcpsite.models import Tenant
from tools_app.principal import Principal

pytestmark = pytest.mark.django_db


def open_refund(user: User) -> Elicitation:
    return elicitation_open(
        tenant_id=Tenant.objects.get(slug="demo").pk,
        principal=Principal("client-1", settings.MCPSITE["ISSUER"], str(user.pk)),
        tool="request_refund",
        args_digest="1" * 64,
        kind=Elicitation.Kind.APPROVAL,
        reference="refund-77",
        message="This needs a staff approval.",
    )


def test_opening_a_row_writes_a_pending_audit_line_from_the_client(django_user_model: type[User]) -> None:
    row = open_refund(django_user_model.objects.get(username="alice"))
    events = list(ElicitationEvent.objects.filter(elicitation=row).values_list("via", "status", "note", "actor"))
    assert events == [("client", "pending", "opened by request_refund (refund-77)", None)]


def test_reusing_an_open_row_writes_no_second_line(django_user_model: type[User]) -> None:
    alice = django_user_model.objects.get(username="alice")
    row = open_refund(alice)
    assert open_refund(alice).pk == row.pk
    assert ElicitationEvent.objects.filter(elicitation=row).count() == 1
