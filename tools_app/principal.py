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
        client_id, issuer, subject = principal_components(token)
        return cls(client_id or "", issuer or "", subject or "")

    @classmethod
    def current(cls) -> Principal:
        """The principal of the request being served (the SDK's auth context)."""
        return cls.of_token(get_access_token())

    @property
    def is_anonymous(self) -> bool:
        return self == ANONYMOUS


ANONYMOUS = Principal()
