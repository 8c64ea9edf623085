"""Deploy checks: what must be set before mcpsite serves anyone but its operator's laptop.

They are Django system checks tagged for deployment, so ``manage.py check --deploy`` lists them
with Django's own. The web process (`mcp_server.serve`) and the Celery worker and beat also run
them at start when deployed (any database but the embedded default's SQLite file in ``var/``)
and refuse to start on any error: `refuse_to_start_misconfigured`. A check acknowledged in
``MCPSITE_SILENCED_SYSTEM_CHECKS`` (Django's ``SILENCED_SYSTEM_CHECKS``) does not refuse.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from django.apps import AppConfig
from django.conf import settings
from django.core.checks import CheckMessage, Error, Tags, Warning, register, run_checks
from django.core.management.base import SystemCheckError

TAG = "mcpsite"


def embedded_default() -> bool:
    """The one-laptop default: the SQLite file in var/ that no MCPSITE_DATABASE_URL replaced."""
    database = settings.DATABASES["default"]
    return (
        str(database["ENGINE"]).endswith("sqlite3")
        and Path(str(database["NAME"])) == Path(settings.VAR_DIR) / "db.sqlite3"
    )


@register(TAG, Tags.security, deploy=True)
def secrets_are_set(app_configs: Sequence[AppConfig] | None = None, **kwargs: Any) -> list[CheckMessage]:
    # The apps' groups are read by name, as settings: the core imports no app.
    errors: list[CheckMessage] = []
    if not settings.MCPSITE["KEY_ENCRYPTION_KEY"]:
        errors.append(
            Error(
                "MCPSITE_KEY_ENCRYPTION_KEY is not set: the requestState keys would be encrypted under a "
                "key derived from the secret key.",
                hint="Set MCPSITE_KEY_ENCRYPTION_KEY (or MCPSITE_KEY_ENCRYPTION_KEY_FILE) to 32+ bytes of "
                "secret randomness, e.g. `python -c 'import secrets; print(secrets.token_urlsafe(48))'`.",
                id="mcpsite.E001",
            )
        )
    elif len(settings.MCPSITE["KEY_ENCRYPTION_KEY"].encode()) < 32:
        errors.append(
            Error(
                "MCPSITE_KEY_ENCRYPTION_KEY is shorter than 32 bytes.",
                hint="Use 32+ bytes of secret randomness.",
                id="mcpsite.E002",
            )
        )
    if not settings.APPROVALS["SANDBOX_WEBHOOK_SECRET"]:
        errors.append(
            Error(
                "MCPSITE_SANDBOX_WEBHOOK_SECRET is not set: the sandbox payment provider would sign with "
                "its default secret, derived from the secret key.",
                hint="Set MCPSITE_SANDBOX_WEBHOOK_SECRET (or MCPSITE_SANDBOX_WEBHOOK_SECRET_FILE) to a "
                "random secret of its own.",
                id="mcpsite.E003",
            )
        )
    if settings.NOTIFICATIONS["ALLOW_LOOPBACK"]:
        errors.append(
            Error(
                "MCPSITE_NOTIFICATIONS_ALLOW_LOOPBACK is on: notification endpoints may reach this machine.",
                hint="It is for tests only: unset it.",
                id="mcpsite.E004",
            )
        )
    if embedded_secret_key_in_use():
        errors.append(
            Error(
                "MCPSITE_SECRET_KEY is not set: each machine would generate a secret key of its own in "
                "MCPSITE_VAR_DIR, so sessions, sign-in links and derived secrets differ between processes.",
                hint="Set MCPSITE_SECRET_KEY (or MCPSITE_SECRET_KEY_FILE) to one secret every process shares.",
                id="mcpsite.E005",
            )
        )
    return errors


@register(TAG, Tags.security, deploy=True)
def metrics_are_private(app_configs: Sequence[AppConfig] | None = None, **kwargs: Any) -> list[CheckMessage]:
    """``/metrics`` answers loopback peers, and others only with the token (`mcpsite.metrics`)."""
    messages: list[CheckMessage] = []
    token: str = settings.MCPSITE["METRICS_TOKEN"]
    if token and len(token.encode()) < 32:
        messages.append(
            Error(
                "MCPSITE_METRICS_TOKEN is shorter than 32 bytes: it is all that keeps /metrics from callers "
                "off this host.",
                hint="Use 32+ bytes of secret randomness, or unset it to answer loopback scrapers only.",
                id="mcpsite.E006",
            )
        )
    if (
        settings.SITE_ROOT.startswith("https://")
        and settings.MCPSITE["METRICS"]
        and not settings.MCPSITE["TRUSTED_PROXIES"]
    ):
        messages.append(
            Warning(
                "An https site root and no MCPSITE_TRUSTED_PROXIES: a TLS proxy on this host makes every "
                "caller's address loopback, and /metrics answers loopback callers without a token.",
                hint="Set MCPSITE_TRUSTED_PROXIES to the proxy's address (it is needed for the client "
                "addresses the limits count anyway), or turn metrics off (MCPSITE_METRICS=0).",
                id="mcpsite.W001",
            )
        )
    return messages


def embedded_secret_key_in_use() -> bool:
    path = Path(settings.VAR_DIR) / "secret_key"
    return path.exists() and path.read_text().strip() == settings.SECRET_KEY


def refuse_to_start_misconfigured() -> None:
    """Deployed, raise `SystemCheckError` listing every deploy check of ours that fails."""
    if embedded_default():
        return
    errors = [
        message
        for message in run_checks(tags=[TAG], include_deployment_checks=True)
        if message.is_serious() and not message.is_silenced()
    ]
    if errors:
        lines = "\n".join(str(message) for message in errors)
        raise SystemCheckError(f"refusing to start deployed (manage.py check --deploy):\n{lines}")
