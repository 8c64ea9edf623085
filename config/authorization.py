"""The authorization server's settings (django-oauth-toolkit's ``OAUTH2_PROVIDER``): the scopes and
what they say on the consent page, RFC 9700's compliant behaviours, registration (DCR and CIMD)
and our validator. `config.settings` hands it the issuer and the token lifetimes."""

from __future__ import annotations

from config.env import env_int


def oauth2_provider(*, issuer: str, access_token_seconds: int) -> dict[str, object]:
    return {
        "SCOPES": {
            "mcp": "Call this tenant's MCP tools",
            # The operator API's (`operator_api`): only for staff-created machine clients of staff users.
            "approvals:read": "Read elicitations and webhook deliveries",
            "approvals:write": "Approve, deny, complete, cancel and expire elicitations",
            "keys:rotate": "Rotate the requestState key ring",
            "tenants:write": "Create tenants and change their toolsets and members",
            "tasks:read": "Read durable tasks",
            "tasks:write": "Cancel durable tasks",
            "audit:read": "Read and export the tool-call audit log",
        },
        # Which client may ask for which scope: operator scopes only for an operator machine client.
        "SCOPES_BACKEND_CLASS": "operator_api.scopes.OperatorScopes",
        "DEFAULT_SCOPES": ["mcp"],
        "ACCESS_TOKEN_EXPIRE_SECONDS": access_token_seconds,
        "REFRESH_TOKEN_EXPIRE_SECONDS": env_int("MCPSITE_REFRESH_TOKEN_SECONDS", 30 * 24 * 3600),
        "ROTATE_REFRESH_TOKEN": True,
        "REFRESH_TOKEN_REUSE_PROTECTION": True,
        "PKCE_REQUIRED": True,
        # RFC 9700: S256 only, no implicit or password grants.
        "COMPLIANT_BCP_RFC9700_PKCE_METHOD": True,
        "COMPLIANT_BCP_RFC9700_IMPLICIT_GRANT": True,
        "COMPLIANT_BCP_RFC9700_PASSWORD_GRANT": True,
        # RFC 9207: authorization responses carry `iss`, and the metadata says so.
        "COMPLIANT_BCP_RFC9700_AUTHZ_RESPONSE_ISS": True,
        # RFC 9700 §4.3.2: an access token in the URL (logged by every proxy on the way) is refused.
        "COMPLIANT_BCP_RFC9700_ACCESS_TOKEN_TRANSPORT": True,
        "OIDC_ISS_ENDPOINT": issuer,
        "OAUTH2_RESPONSE_TYPES_SUPPORTED": ["code"],
        # Only grants that act for a person (no client_credentials: a userless token acts at no tenant).
        "OAUTH2_GRANT_TYPES_SUPPORTED": ["authorization_code", "refresh_token"],
        "OAUTH2_TOKEN_ENDPOINT_AUTH_METHODS_SUPPORTED": ["none", "client_secret_basic", "client_secret_post"],
        "DCR_ENABLED": True,
        "DCR_REGISTRATION_PERMISSION_CLASSES": ("oauth2_provider.dcr.AllowAllDCRPermission",),
        # A client may name itself by its Client ID Metadata Document's https URL instead of registering;
        # the document is held to the registration rules (mcpsite.oauth.VettedMetadataFetcher).
        "CIMD_ENABLED": True,
        "CIMD_METADATA_FETCHER": "mcpsite.oauth.VettedMetadataFetcher",
        "CIMD_REGISTRATION_PERMISSION_CLASSES": ("mcpsite.oauth.RateLimitedCIMDPermission",),
        # Codes and refresh tokens honoured only for active members; only the grants above served.
        # Plus client_credentials for operator machine clients only (`operator_api.oauth`).
        "OAUTH2_VALIDATOR_CLASS": "operator_api.oauth.OperatorOAuth2Validator",
    }
