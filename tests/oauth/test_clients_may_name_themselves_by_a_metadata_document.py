"""A client may name itself by the https URL of its Client ID Metadata Document (CIMD) instead of
registering: the authorization server fetches the document at first sight, holds it to the rules a
registration is held to, and a client that prefers CIMD (the SDK's, given a ``client_metadata_url``)
uses it once the metadata advertises it.

The documents are served by a real HTTP server on loopback (`tests.oauth.cimd.DocumentHost`); the
test server is told to fetch them with the tests' loopback fetcher (``MCPSITE_OAUTH_CIMD_FETCHER``),
since DOT's default fetcher refuses loopback addresses, as production must."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import anyio
import httpx2
import pytest
from django.core.cache import cache
from mcp import Client
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientMetadata
from oauth2_provider.models import AccessToken, Application

from tests.conftest import Cast, LiveServer
from tests.http import signed_in
from tests.mcp.clients import MODES, accept, answering, text
from tests.oauth.browser import CALLBACK, chromium_page, sign_in_and_decide
from tests.oauth.cimd import FETCHER, DocumentHost
from tests.oauth.helpers import Pkce, authorize_query
from tests.oauth.test_oauth_client_flow import MemoryStorage

CLIENT = {
    "client_name": "CIMD test client",
    "redirect_uris": [CALLBACK],
    "grant_types": ["authorization_code", "refresh_token"],
    "response_types": ["code"],
    "token_endpoint_auth_method": "none",
    "application_type": "native",
}


@pytest.fixture(scope="module")
def documents() -> Iterator[DocumentHost]:
    with DocumentHost() as host:
        yield host


@pytest.fixture(scope="module")
def site(server_factory: Callable[..., LiveServer]) -> LiveServer:
    return server_factory(MCPSITE_OAUTH_CIMD_FETCHER=FETCHER)


def test_the_metadata_advertises_client_id_metadata_documents(live: LiveServer) -> None:
    metadata = httpx2.get(f"{live.url}/.well-known/oauth-authorization-server").json()
    assert metadata["client_id_metadata_document_supported"] is True


def test_by_default_a_document_on_a_loopback_address_is_never_fetched(
    live: LiveServer, documents: DocumentHost, cast: Cast
) -> None:
    """Production's fetcher is DOT's SSRF-guarded one: https only, and no loopback or private address."""
    path = "/clients/default-fetcher.json"
    client_id = documents.serve(path, **CLIENT)
    http = signed_in(live, "alice", "alice-password-1")
    response = http.get(authorize_query(client_id, live.mcp_url(), Pkce.new()))
    assert response.status_code == 400
    assert "Invalid client_id parameter value." in response.text
    assert path not in documents.fetches
    assert not Application.objects.filter(client_id=client_id).exists()


@pytest.mark.parametrize("mode", MODES)
def test_a_client_that_prefers_cimd_signs_in_with_its_document_and_calls_a_tool(
    site: LiveServer, documents: DocumentHost, cast: Cast, mode: str
) -> None:
    path = f"/clients/sdk-{mode}.json"
    client_id = documents.serve(path, **CLIENT)
    storage = MemoryStorage()
    applications_before = Application.objects.count()

    async def scenario() -> str:
        async with chromium_page() as page:
            decision: dict[str, Any] = {}

            async def redirect_handler(url: str) -> None:
                decision.update(await sign_in_and_decide(page, url, "alice", "alice-password-1", shot=f"cimd-{mode}"))

            async def callback_handler() -> AuthorizationCodeResult:
                return AuthorizationCodeResult(
                    code=decision["code"][0], state=decision["state"][0], iss=decision["iss"][0]
                )

            provider = OAuthClientProvider(
                server_url=site.mcp_url(),
                client_metadata=OAuthClientMetadata.model_validate(CLIENT),
                storage=storage,
                redirect_handler=redirect_handler,
                callback_handler=callback_handler,
                client_metadata_url=client_id,
            )
            http = httpx2.AsyncClient(auth=provider, timeout=30)
            async with (
                http,
                Client(
                    streamable_http_client(site.mcp_url(), http_client=http),
                    mode=mode,
                    elicitation_callback=answering(accept(region="eu-west-1")),
                ) as client,
            ):
                return text(await client.call_tool("provision", {"name": "orders"}))

    assert anyio.run(scenario) == "Provisioned 'orders' in eu-west-1."
    # No registration: the document's URL is the client, fetched once, a public CIMD client.
    assert storage.client_info is not None and storage.client_info.client_id == client_id
    assert Application.objects.count() == applications_before + 1
    application = Application.objects.get(client_id=client_id)
    assert application.registration_source == Application.RegistrationSource.CIMD
    assert (application.client_type, application.name) == (Application.CLIENT_PUBLIC, "CIMD test client")
    assert documents.fetches[path] == 1
    assert storage.tokens is not None
    token = AccessToken.objects.get(token=storage.tokens.access_token)
    assert (token.user, token.application, token.resource) == (cast.user("alice"), application, [site.mcp_url()])


REFUSED_DOCUMENTS = {
    "another client id": {**CLIENT, "client_id": "https://client.example/metadata.json"},
    "a plain http redirect": {**CLIENT, "redirect_uris": ["http://client.example/callback"]},
    "client credentials": {**CLIENT, "grant_types": ["client_credentials"]},
    "the implicit grant": {**CLIENT, "grant_types": ["implicit"], "response_types": ["token"]},
    "a client secret": {**CLIENT, "token_endpoint_auth_method": "client_secret_basic"},
}


@pytest.mark.parametrize("case", REFUSED_DOCUMENTS)
def test_a_document_that_registration_would_refuse_names_no_client(
    site: LiveServer, documents: DocumentHost, cast: Cast, case: str
) -> None:
    path = f"/clients/refused-{case.replace(' ', '-')}.json"
    client_id = documents.client_id(path)
    documents.serve(path, **{"client_id": client_id, **REFUSED_DOCUMENTS[case]})
    http = signed_in(site, "alice", "alice-password-1")

    response = http.get(authorize_query(client_id, site.mcp_url(), Pkce.new()))

    assert response.status_code == 400
    assert "Cannot authorize: invalid_request" in response.text
    assert "Invalid client_id parameter value." in response.text
    assert documents.fetches[path] == 1  # fetched and refused for what it says
    assert not Application.objects.filter(client_id=client_id).exists()
    # Nor at the token endpoint.
    token = httpx2.post(
        f"{site.url}/o/token/",
        data={"grant_type": "authorization_code", "code": "x", "redirect_uri": CALLBACK, "client_id": client_id},
        timeout=10,
    )
    assert token.status_code == 401
    assert token.json() == {"error": "invalid_client"}


def test_new_clients_by_document_are_limited_per_address_as_registrations_are(
    server_factory: Callable[..., LiveServer], documents: DocumentHost, cast: Cast
) -> None:
    server = server_factory(MCPSITE_OAUTH_CIMD_FETCHER=FETCHER, MCPSITE_DCR_PER_HOUR="2")
    cache.delete("mcpsite:cimd:127.0.0.1")  # the count lives in the suite's shared Redis
    try:
        http = signed_in(server, "alice", "alice-password-1")
        paths = [f"/clients/limited-{n}.json" for n in range(3)]
        answers = [
            http.get(authorize_query(documents.serve(path, **CLIENT), server.mcp_url(), Pkce.new())) for path in paths
        ]
        assert [answer.status_code for answer in answers] == [200, 200, 400]
        assert "Invalid client_id parameter value." in answers[2].text
        assert paths[2] not in documents.fetches  # refused before anything was fetched
        assert not Application.objects.filter(client_id=documents.client_id(paths[2])).exists()
    finally:
        cache.delete("mcpsite:cimd:127.0.0.1")
