"""Who called: one value for the OAuth principal a call runs as, everywhere it is recorded or compared."""

from __future__ import annotations

from typing import NamedTuple

from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.provider import AccessToken, principal_components


class Principal(NamedTuple):
    """The OAuth client and the user it acts for (issuer, subject), as the SDK reads them off the
    verified token; all three empty for a caller of a public tenant without a token. A tuple, so
    rows store and compare it field by field (``client_id``, ``issuer``, ``subject`` columns)."""

    client_id: str = ""
    issuer: str = ""
    subject: str = ""

    @classmethod
    def of_token(cls, token: AccessToken | None) -> Principal:
        if token is None:
            return ANONYMOUS
        # The token verifier hands every request of a token the one object it built (its cache),
        # and a call asks twice (its log context, its audit row): the principal is remembered per
        # token object. The entry holds the token, so its id cannot name another object meanwhile.
        known = _by_token.get(id(token))
        if known is not None and known[0] is token:
            return known[1]
        client_id, issuer, subject = principal_components(token)
        principal = cls(client_id or "", issuer or "", subject or "")
        if len(_by_token) >= _TOKENS_REMEMBERED:
            _by_token.clear()
        _by_token[id(token)] = (token, principal)
        return principal

    @classmethod
    def current(cls) -> Principal:
        """The principal of the request being served (the SDK's auth context)."""
        return cls.of_token(get_access_token())

    @property
    def is_anonymous(self) -> bool:
        return self == ANONYMOUS


ANONYMOUS = Principal()

_TOKENS_REMEMBERED = 4096
_by_token: dict[int, tuple[AccessToken, Principal]] = {}
"""The principal of each token object seen lately (`Principal.of_token`); cleared when full."""
