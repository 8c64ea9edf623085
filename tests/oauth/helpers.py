"""Plain HTTP helpers for the authorization-server tests (a browser is only needed for the pages)."""

from __future__ import annotations

import base64
import hashlib
import re
import secrets
from dataclasses import dataclass
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx2

from tests.conftest import LiveServer
from tests.http import csrf
from tests.oauth.browser import CALLBACK


def register_client(live: LiveServer, name: str = "test client", redirect_uri: str = CALLBACK) -> httpx2.Response:
    return httpx2.post(
        f"{live.url}/o/register/",
        json={
            "client_name": name,
            "application_type": "native",
            "redirect_uris": [redirect_uri],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": "none",
        },
        timeout=10,
    )


@dataclass
class Pkce:
    verifier: str
    challenge: str

    @classmethod
    def new(cls) -> Pkce:
        verifier = secrets.token_urlsafe(48)
        challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).decode().rstrip("=")
        return cls(verifier, challenge)


def authorize_query(client_id: str, resource: str | None, pkce: Pkce, **overrides: str) -> str:
    params = {
        "response_type": "code",
        "client_id": client_id,
        "redirect_uri": CALLBACK,
        "state": "xyz",
        "code_challenge": pkce.challenge,
        "code_challenge_method": "S256",
        "scope": "mcp",
        **({"resource": resource} if resource else {}),
        **overrides,
    }
    return "/o/authorize/?" + urlencode(params)


def decide(http: httpx2.Client, query: str, *, allow: bool = True) -> httpx2.Response:
    """GET the consent page and submit it as a person would."""
    page = http.get(query)
    assert page.status_code == 200, page.text[:500]
    fields = dict(re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)"', page.text))
    fields["csrfmiddlewaretoken"] = csrf(page)
    if allow:
        fields["allow"] = "Authorize"
    return http.post(query, data=fields)


def callback_params(response: httpx2.Response) -> dict[str, str]:
    assert response.status_code == 302, response.text[:500]
    location = response.headers["location"]
    assert location.startswith(CALLBACK), location
    return {k: v[0] for k, v in parse_qs(urlsplit(location).query).items()}


def exchange(live: LiveServer, client_id: str, code: str, verifier: str, resource: str) -> httpx2.Response:
    return httpx2.post(
        f"{live.url}/o/token/",
        data={
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": CALLBACK,
            "client_id": client_id,
            "code_verifier": verifier,
            "resource": resource,
        },
        timeout=10,
    )
