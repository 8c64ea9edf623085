"""Shared by the operator API tests: the operators, machine clients with real tokens from the
token endpoint (client_credentials), and an HTTP client for ``/api/v1/``.

The cast adds `ops` (staff, with every Django permission the API checks) and `clerk` (staff, with
none); `staff` is a superuser, `alice` a member without staff status. The approvals tests' server
(the demo tenant serving `payments`, short waits) serves these tests too.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import httpx2
import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.utils import timezone
from oauth2_provider.models import AccessToken

from mcpsite import services as mcpsite_services
from operator_api.services import operator_client_create
from tests.approvals import conftest as approvals
from tests.conftest import LiveServer

# The approvals tests' server and toolsets serve these tests too.
payments_enabled = approvals.payments_enabled
server = approvals.server

ALL_SCOPES = [
    "approvals:read",
    "approvals:write",
    "keys:rotate",
    "tenants:write",
    "tasks:read",
    "tasks:write",
    "audit:read",
]
OPS_PERMISSIONS = [
    "approvals.view_elicitation",
    "approvals.change_elicitation",
    "approvals.view_webhookdelivery",
    "mcpsite.view_requeststatekey",
    "mcpsite.rotate_requeststatekey",
    "mcpsite.view_tenant",
    "mcpsite.add_tenant",
    "mcpsite.change_tenant",
    "mcpsite.view_role",
    "mcpsite.add_role",
    "mcpsite.change_role",
    "mcpsite.delete_role",
    "mcpsite.change_memberrole",
    "mcp_tasks.view_task",
    "mcp_tasks.cancel_task",
    "audit.view_toolcall",
]


@pytest.fixture(scope="package", autouse=True)
def operators(django_db_setup: None, django_db_blocker: Any) -> Iterator[None]:
    with django_db_blocker.unblock():
        User = get_user_model()
        ops, _ = User.objects.get_or_create(username="ops", defaults={"is_staff": True})
        for name in OPS_PERMISSIONS:
            app_label, codename = name.split(".")
            ops.user_permissions.add(Permission.objects.get(content_type__app_label=app_label, codename=codename))
        User.objects.get_or_create(username="clerk", defaults={"is_staff": True})
    yield


@dataclass(frozen=True)
class Operator:
    """A machine client and one token the token endpoint gave it."""

    client_id: str
    secret: str
    token: str


def token_request(server: LiveServer, client_id: str, secret: str, scope: str | None = None) -> httpx2.Response:
    data = {"grant_type": "client_credentials", **({"scope": scope} if scope is not None else {})}
    return httpx2.post(f"{server.url}/o/token/", data=data, auth=(client_id, secret), timeout=10)


def machine_client(server: LiveServer, username: str = "ops", scopes: list[str] | None = None) -> Operator:
    """A machine client of `username` created as staff create one, and a token for all its scopes."""
    scopes = scopes or ALL_SCOPES
    application, secret = operator_client_create(user=get_user_model().objects.get(username=username), scopes=scopes)
    response = token_request(server, application.client_id, secret)
    assert response.status_code == 200, response.text
    body = response.json()
    assert sorted(body["scope"].split()) == sorted(scopes)
    return Operator(client_id=application.client_id, secret=secret, token=body["access_token"])


def user_token(username: str, scope: str, resource: list[str] | None = None) -> str:
    """A token held by a user (not a machine client's), minted straight into the database."""
    return AccessToken.objects.create(
        resource=resource,
        user=get_user_model().objects.get(username=username),
        application=mcpsite_services.script_application(),
        token=secrets.token_urlsafe(32),
        expires=timezone.now() + timedelta(hours=1),
        scope=scope,
    ).token


def api(server: LiveServer, token: str | None = None) -> httpx2.Client:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return httpx2.Client(base_url=f"{server.url}/api/v1", headers=headers, timeout=15)
