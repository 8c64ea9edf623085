"""Typed access to ``settings.MCPSITE`` (mypy sees a plain dict of objects through ``settings``)."""

from __future__ import annotations

from typing import TypedDict, cast

from django.conf import settings


class SigninSettings(TypedDict):
    """``settings.SIGNIN``: sign-in throttling (`mcpsite.signin`)."""

    FAILURES_PER_ACCOUNT: int
    FAILURES_PER_ADDRESS: int
    LOCKOUT_SECONDS: int
    DELAY_MAX_SECONDS: int


class McpsiteSettings(TypedDict):
    ISSUER: str
    DCR_PER_HOUR: int
    DCR_UNUSED_KEEP_SECONDS: int
    DCR_PURGE_BATCH_SIZE: int
    DCR_PURGE_BATCHES_PER_RUN: int
    OAUTH_CIMD_FETCHER: str
    KEY_ENCRYPTION_KEY: str
    REQUEST_STATE_TTL: float
    POLL_SECONDS: float
    TOKEN_CACHE_SECONDS: float
    MAX_REQUEST_BODY: int
    MAX_REQUEST_HEAD: int
    TRUSTED_PROXIES: list[str]
    REQUEST_HEAD_TIMEOUT_SECONDS: float
    REQUEST_BODY_TIMEOUT_SECONDS: float
    MAX_CONNECTIONS_PER_ADDRESS: int
    CALL_QUOTA_WINDOW_SECONDS: int
    CALL_QUOTA_PER_TENANT: int
    CALL_QUOTA_PER_PERSON: int
    SHUTDOWN_GRACE_SECONDS: float
    EVENT_LOOP: str
    OTEL_SPANS: bool
    COMPILED_CALLS: bool
    METRICS: bool
    METRICS_TOKEN: str
    METRICS_PER_TENANT: bool
    METRICS_COLLECTORS: list[str]
    MCP_ALLOWED_HOSTS: list[str]
    MCP_ALLOWED_ORIGINS: list[str]
    CORS_ALLOWED_ORIGINS: list[str]
    MAX_SESSIONS_PER_PRINCIPAL: int
    SESSION_IDLE_SECONDS: float
    TENANTS_MAX_LOADED: int
    TENANT_IDLE_SECONDS: float


def mcpsite_settings() -> McpsiteSettings:
    return cast("McpsiteSettings", settings.MCPSITE)
