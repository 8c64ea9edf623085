"""A machine client's token acts with all of its operator's permissions, so the OAuth application
admin changes an operator client's user, secret, grant or client type only for staff holding
``operator_api.change_operatorclient`` and every permission of the client's operator, before and
after. Without it those fields are read only; a refused change saves nothing and the operator API
still answers as the old operator. An allowed change is audited and revokes the client's tokens.

The admin is driven through Django's test client (the same database the live server reads); the
operator API and the token endpoint are the live server's.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from django.contrib.auth.models import Permission, User
from django.test import Client
from django.test.client import Client as DjangoClient
from oauth2_provider.models import Application

from operator_api.models import OperatorClientEvent
from tests.api.conftest import Operator, api, machine_client, token_request
from tests.conftest import Cast, LiveServer

EDIT_APPLICATIONS = ["oauth2_provider.view_application", "oauth2_provider.change_application"]
KEEPER = [
    *EDIT_APPLICATIONS,
    "operator_api.change_operatorclient",
    "mcpsite.view_requeststatekey",
    "mcpsite.rotate_requeststatekey",
]


def staff_member(permissions: list[str]) -> User:
    user = User.objects.create_user(f"staff-{uuid.uuid4().hex[:8]}", is_staff=True)
    for name in permissions:
        app_label, codename = name.split(".")
        user.user_permissions.add(Permission.objects.get(content_type__app_label=app_label, codename=codename))
    return user


def admin_as(user: User) -> DjangoClient:
    client = Client()
    client.force_login(user)
    return client


def change_url(client_id: str) -> str:
    return f"/admin/oauth2_provider/application/{Application.objects.get(client_id=client_id).pk}/change/"


def save(admin: DjangoClient, client_id: str, **changes: Any) -> Any:
    """Submit the application's change form as a person would: every field as shown, some changed."""
    page = admin.get(change_url(client_id))
    assert page.status_code == 200
    form = page.context["adminform"].form
    data: dict[str, Any] = {}
    for name in form.fields:
        value = form[name].value()
        if isinstance(value, bool):
            if value:
                data[name] = "on"
        elif value is not None:
            data[name] = value
    return admin.post(change_url(client_id), {**data, **changes, "_save": "Save"})


def rotates(server: LiveServer, operator: Operator) -> tuple[int, Any]:
    """Add a key to the ring through the operator API (what a superuser's client may do)."""
    with api(server, operator.token) as http:
        response = http.post("/keys/")
    return response.status_code, response.json()


def fresh_token(server: LiveServer, client_id: str, secret: str) -> Operator:
    response = token_request(server, client_id, secret)
    assert response.status_code == 200, response.text
    return Operator(client_id=client_id, secret=secret, token=response.json()["access_token"])


def operator_of(client_id: str) -> str:
    return str(Application.objects.select_related("user").get(client_id=client_id).user)


def test_staff_who_may_only_edit_applications_cannot_point_their_client_at_a_superuser(
    server: LiveServer, cast: Cast
) -> None:
    clerk = staff_member(EDIT_APPLICATIONS)
    own = machine_client(server, clerk.username, ["keys:rotate"])

    response = save(admin_as(clerk), own.client_id, user=str(cast.user("staff").pk))

    assert response.status_code == 302  # saved what they may change; the user field is read only
    assert operator_of(own.client_id) == clerk.username
    status, body = rotates(server, fresh_token(server, own.client_id, own.secret))
    assert (status, body) == (
        403,
        {"detail": f"{clerk.username} lacks the 'mcpsite.rotate_requeststatekey' permission."},
    )
    assert not OperatorClientEvent.objects.filter(client_id=own.client_id).exists()


def test_staff_who_may_only_edit_applications_cannot_set_a_secret_on_a_superusers_client(
    server: LiveServer, cast: Cast
) -> None:
    clerk = staff_member(EDIT_APPLICATIONS)
    superusers = machine_client(server, "staff", ["keys:rotate"])

    save(admin_as(clerk), superusers.client_id, client_secret="chosen-by-the-clerk")

    refused = token_request(server, superusers.client_id, "chosen-by-the-clerk")
    assert (refused.status_code, refused.json()["error"]) == (401, "invalid_client")
    assert token_request(server, superusers.client_id, superusers.secret).status_code == 200
    assert not OperatorClientEvent.objects.filter(client_id=superusers.client_id).exists()


def test_the_operator_permission_alone_does_not_let_staff_bind_a_client_to_someone_stronger(
    server: LiveServer, cast: Cast
) -> None:
    keeper = staff_member(KEEPER)
    own = machine_client(server, keeper.username, ["keys:rotate"])
    superusers = machine_client(server, "staff", ["keys:rotate"])
    admin = admin_as(keeper)

    rebound = save(admin, own.client_id, user=str(cast.user("staff").pk))
    secret_set = save(admin, superusers.client_id, client_secret="chosen-by-the-keeper")

    for response in (rebound, secret_set):
        assert response.status_code == 200  # the form again, with the reason
        (error,) = response.context["adminform"].form.non_field_errors()
        assert error == (
            f"staff holds permissions {keeper.username} does not: a machine client acts with all of its "
            "operator's, so only someone holding them may change it."
        )
    assert operator_of(own.client_id) == keeper.username
    assert token_request(server, superusers.client_id, "chosen-by-the-keeper").status_code == 401
    assert not OperatorClientEvent.objects.filter(client_id__in=[own.client_id, superusers.client_id]).exists()


def test_a_holder_of_every_permission_may_set_a_new_secret_and_it_is_audited(server: LiveServer, cast: Cast) -> None:
    keeper = staff_member(KEEPER)
    own = machine_client(server, keeper.username, ["keys:rotate"])

    response = save(admin_as(keeper), own.client_id, client_secret="the-new-secret-of-the-keeper")

    assert response.status_code == 302
    assert rotates(server, own)[0] == 401  # a token minted with the old secret is revoked
    assert token_request(server, own.client_id, own.secret).status_code == 401
    assert rotates(server, fresh_token(server, own.client_id, "the-new-secret-of-the-keeper"))[0] == 201
    (event,) = OperatorClientEvent.objects.filter(client_id=own.client_id)
    assert (event.actor, event.changed, event.note, event.via) == (keeper, ["client_secret"], "secret set", "staff")
    assert "the-new-secret" not in str(event.note)


def test_a_superuser_may_rebind_a_client_and_its_tokens_then_act_for_the_new_operator(
    server: LiveServer, cast: Cast
) -> None:
    clerk = staff_member(EDIT_APPLICATIONS)
    keeper = staff_member(KEEPER)
    client = machine_client(server, keeper.username, ["keys:rotate"])

    response = save(admin_as(User.objects.get(username="staff")), client.client_id, user=str(clerk.pk))

    assert response.status_code == 302
    assert operator_of(client.client_id) == clerk.username
    assert rotates(server, client)[0] == 401  # the keeper's token does not go on as the clerk's
    status, body = rotates(server, fresh_token(server, client.client_id, client.secret))
    assert (status, body) == (
        403,
        {"detail": f"{clerk.username} lacks the 'mcpsite.rotate_requeststatekey' permission."},
    )
    (event,) = OperatorClientEvent.objects.filter(client_id=client.client_id)
    assert (event.actor, event.changed, event.note) == (
        cast.user("staff"),
        ["user"],
        f"user {keeper.username} -> {clerk.username}",
    )


@pytest.mark.parametrize("field", ["authorization_grant_type", "client_type"])
def test_the_grant_and_client_type_of_a_superusers_client_are_read_only_to_staff_without_the_permission(
    server: LiveServer, cast: Cast, field: str
) -> None:
    clerk = staff_member(EDIT_APPLICATIONS)
    superusers = machine_client(server, "staff", ["keys:rotate"])
    page = admin_as(clerk).get(change_url(superusers.client_id))
    assert field not in page.context["adminform"].form.fields
    assert field in page.context["adminform"].readonly_fields
