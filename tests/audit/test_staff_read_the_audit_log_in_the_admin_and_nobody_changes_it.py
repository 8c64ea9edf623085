"""Staff read the audit log in the admin, filtered by tenant, user, tool, outcome and time; nobody
adds, changes or deletes a row there, a superuser included (no buttons, no action, 403)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from audit.models import ToolCall
from mcpsite.models import Tenant

pytestmark = pytest.mark.django_db

SAVE_BUTTONS = ('name="_save"', 'name="_continue"', 'name="_addanother"')
LIST = "/admin/audit/toolcall/"


@pytest.fixture
def staff() -> Client:
    client = Client()
    client.force_login(get_user_model().objects.get(username="staff"))  # a superuser
    return client


@pytest.fixture
def rows() -> dict[str, ToolCall]:
    demo, other = Tenant.objects.get(slug="demo"), Tenant.objects.get(slug="other")
    users = get_user_model().objects
    made = {
        name: ToolCall.objects.create(
            at=datetime(2026, month, 3, 9, 30, tzinfo=UTC),
            tenant=tenant,
            user=users.get(username=user),
            tool=tool,
            arguments_digest="f" * 64,
            outcome=outcome,
            duration_ms=2.0,
            request_id=f"request-of-{name}",
            generation="2026-07-28",
        )
        for name, (month, tenant, user, tool, outcome) in {
            "alices": (4, demo, "alice", "provision", ToolCall.Outcome.RESULT),
            "bobs": (5, demo, "bob", "book_table", ToolCall.Outcome.TOOL_ERROR),
            "mallorys": (6, other, "mallory", "provision", ToolCall.Outcome.REFUSED_SCOPE),
        }.items()
    }
    return made


def listed(staff: Client, query: str) -> set[str]:
    page = staff.get(f"{LIST}?{query}")
    assert page.status_code == 200
    html = page.content.decode()
    return {name for name in ("alices", "bobs", "mallorys") if f"request-of-{name}" in html}


def test_staff_filter_the_log_by_tenant_user_tool_outcome_and_time(staff: Client, rows: dict[str, ToolCall]) -> None:
    demo, bob = rows["alices"].tenant_id, rows["bobs"].user_id
    assert listed(staff, "") == {"alices", "bobs", "mallorys"}
    assert listed(staff, f"tenant__id__exact={demo}") == {"alices", "bobs"}
    assert listed(staff, f"user__id__exact={bob}") == {"bobs"}
    assert listed(staff, "tool=provision") == {"alices", "mallorys"}
    assert listed(staff, "outcome__exact=refused_scope") == {"mallorys"}
    assert listed(staff, "at__year=2026&at__month=5") == {"bobs"}  # the date hierarchy
    assert listed(staff, "q=request-of-alices") == {"alices"}
    page = staff.get(LIST).content.decode()
    assert '<a href="?tool=book_table"' in page  # the tool filter offers the toolsets' tools


def test_no_one_adds_changes_or_deletes_a_row_in_the_admin(staff: Client, rows: dict[str, ToolCall]) -> None:
    row = rows["alices"]
    page = staff.get(f"{LIST}{row.pk}/change/")
    assert page.status_code == 200
    html = page.content.decode()
    assert "request-of-alices" in html and "deletelink" not in html
    assert not [button for button in SAVE_BUTTONS if button in html]
    assert staff.post(f"{LIST}{row.pk}/change/", {"outcome": "result"}).status_code == 403
    assert staff.get(f"{LIST}add/").status_code == 403
    assert staff.post(f"{LIST}{row.pk}/delete/", {"post": "yes"}).status_code == 403
    assert 'value="delete_selected"' not in staff.get(LIST).content.decode()
    staff.post(LIST, {"action": "delete_selected", "_selected_action": [row.pk], "post": "yes"})
    assert ToolCall.objects.filter(pk=row.pk).exists()
