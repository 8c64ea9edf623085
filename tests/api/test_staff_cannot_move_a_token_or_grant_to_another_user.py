"""Tokens, grants and ID tokens are issued by the OAuth flows for one user and one client. In the
admin every field of one is read only, even to staff holding the library's change permission: a
token moved to a superuser (or given a wider scope, another client or a later expiry) would act
with that user's permissions. Revoking stays.

The admin is driven through Django's test client, on the database the live server reads.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.utils import timezone
from oauth2_provider.models import AccessToken, Grant, RefreshToken

from tests.api.test_a_machine_client_is_never_bound_to_a_stronger_operator import admin_as, staff_member
from tests.conftest import Cast, LiveServer

CREDENTIALS = [
    ("accesstoken", AccessToken, ["user", "application", "scope", "expires", "resource"]),
    ("refreshtoken", RefreshToken, ["user", "application", "access_token", "revoked"]),
    ("grant", Grant, ["user", "application", "scope", "expires", "redirect_uri"]),
]


def _alices_credentials(live: LiveServer, cast: Cast) -> dict[str, object]:
    issued = cast.token(live, "alice")  # minted as `manage.py mcp_token` does
    token = AccessToken.objects.get(token=issued)
    refresh = RefreshToken.objects.create(
        user=token.user,
        application=token.application,
        token=f"r-{token.pk}-{timezone.now().timestamp()}",
        access_token=None,
    )
    grant = Grant.objects.create(
        user=token.user,
        application=token.application,
        code=f"g-{token.pk}-{timezone.now().timestamp()}",
        expires=timezone.now() + timedelta(minutes=5),
        redirect_uri="http://127.0.0.1:1/cb",
        scope="mcp",
    )
    return {"accesstoken": token, "refreshtoken": refresh, "grant": grant}


@pytest.mark.parametrize(("model_name", "model", "fields"), CREDENTIALS)
def test_every_field_of_an_issued_credential_is_read_only_to_staff_who_may_change_it(
    live: LiveServer, cast: Cast, model_name: str, model: type, fields: list[str]
) -> None:
    clerk = staff_member([f"oauth2_provider.view_{model_name}", f"oauth2_provider.change_{model_name}"])
    credential = _alices_credentials(live, cast)[model_name]

    page = admin_as(clerk).get(f"/admin/oauth2_provider/{model_name}/{credential.pk}/change/")  # type: ignore[attr-defined]

    assert page.status_code == 200
    assert set(page.context["adminform"].form.fields) == set()  # nothing to edit
    for field in fields:
        assert field in page.context["adminform"].readonly_fields
    assert {"token", "code"}.isdisjoint(page.context["adminform"].readonly_fields)  # the secret stays hidden


def test_a_token_posted_with_a_superuser_stays_alices(live: LiveServer, cast: Cast) -> None:
    clerk = staff_member(["oauth2_provider.view_accesstoken", "oauth2_provider.change_accesstoken"])
    token = _alices_credentials(live, cast)["accesstoken"]
    assert isinstance(token, AccessToken)
    issued_scope = token.scope  # what `mcp_token` grants: mcp and the tools' scopes, never keys:rotate
    assert "keys:rotate" not in issued_scope.split()
    superuser = User.objects.get(username="staff")

    admin = admin_as(clerk)
    url = f"/admin/oauth2_provider/accesstoken/{token.pk}/change/"
    form = admin.get(url).context["adminform"].form
    shown = {
        name: form[name].value() for name in form.fields if name != "expires" and form[name].value() is not None
    }  # as a person would
    admin.post(
        url,
        {
            **shown,
            "user": superuser.pk,
            "scope": "mcp keys:rotate",
            "expires_0": "2099-01-01",
            "expires_1": "00:00:00",
            "_save": "Save",
        },
    )

    token.refresh_from_db()
    assert (token.user.username, token.scope) == ("alice", issued_scope)
    assert token.expires < timezone.now() + timedelta(days=1)
