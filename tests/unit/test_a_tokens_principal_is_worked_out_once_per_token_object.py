"""`Principal.of_token` remembers the principal of each token object (the verifier hands every
request of a token the one object it built): the same object answers from memory, another token
is never answered with the first one's principal, and what is remembered stays bounded."""

from __future__ import annotations

from mcp.server.auth.provider import AccessToken

from tools_app import principal as module
from tools_app.principal import ANONYMOUS, Principal


def token(client_id: str, subject: str | None = "7", issuer: str | None = "https://id.example") -> AccessToken:
    claims = {"iss": issuer} if issuer is not None else None
    return AccessToken(token="t", client_id=client_id, scopes=["mcp"], subject=subject, claims=claims)


def test_the_same_token_object_gives_the_same_principal_from_memory() -> None:
    alice = token("app-a")
    first = Principal.of_token(alice)
    assert first == Principal("app-a", "https://id.example", "7")
    assert Principal.of_token(alice) is first


def test_each_token_gets_its_own_principal_however_alike_the_objects() -> None:
    seen = {Principal.of_token(token(f"app-{n}", subject=str(n))) for n in range(50)}
    assert len(seen) == 50  # a freed token's id may be reused: never its principal
    assert Principal.of_token(token("app-x", subject=None, issuer=None)) == Principal("app-x", "", "")
    assert Principal.of_token(None) is ANONYMOUS


def test_what_is_remembered_is_bounded() -> None:
    kept = [token(f"app-{n}") for n in range(module._TOKENS_REMEMBERED + 10)]
    for each in kept:
        Principal.of_token(each)
    assert len(module._by_token) <= module._TOKENS_REMEMBERED
    assert Principal.of_token(kept[-1]) == Principal(f"app-{len(kept) - 1}", "https://id.example", "7")
