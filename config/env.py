"""Reading settings from the environment: small typed helpers, each refusing what it cannot read
rather than guessing (`config.settings` is written with them)."""

from __future__ import annotations

import os
import secrets
from pathlib import Path
from typing import Literal, get_args
from urllib.parse import unquote, urlsplit

from django.core.exceptions import ImproperlyConfigured


def env_str(name: str, default: str = "") -> str:
    return os.environ.get(name, default)


def env_secret(name: str, default: str = "") -> str:
    """A secret from ``NAME``, or read from the file ``NAME_FILE`` names (a mounted secret; one
    trailing newline dropped). Both set is refused: which one was meant cannot be told."""
    path = os.environ.get(f"{name}_FILE")
    if path is None:
        return os.environ.get(name, default)
    if name in os.environ:
        raise ImproperlyConfigured(f"{name} and {name}_FILE are both set: set one")
    try:
        text = Path(path).read_text()
    except OSError as exc:
        raise ImproperlyConfigured(f"{name}_FILE: cannot read {path}: {exc.strerror}") from None
    return text.removesuffix("\n").removesuffix("\r")


def env_int(name: str, default: int) -> int:
    return int(os.environ.get(name, default))


def env_float(name: str, default: float) -> float:
    return float(os.environ.get(name, default))


def env_choice(name: str, default: str, choices: tuple[str, ...]) -> str:
    """One word of `choices` (any case; unset or empty: `default`); anything else is refused at
    start-up, naming the setting and what it takes."""
    word = os.environ.get(name, "").strip().lower() or default
    if word not in choices:
        raise ImproperlyConfigured(f"{name}: expected {' or '.join(choices)}, got {word!r}")
    return word


_TRUE = ("1", "true", "yes", "on")
_FALSE = ("0", "false", "no", "off")


def env_bool(name: str, default: bool) -> bool:
    """A typo (``MCPSITE_DEBUG=ture``) is refused at start-up rather than read as false."""
    value = os.environ.get(name)
    if value is None:
        return default
    word = value.strip().lower()
    if word in _TRUE:
        return True
    if word in _FALSE or not word:  # set but empty: false, as it always was
        return False
    raise ImproperlyConfigured(
        f"{name}: expected one of {', '.join(_TRUE + _FALSE)} (any case; empty is false), got {value!r}"
    )


def env_list(name: str, default: list[str]) -> list[str]:
    value = os.environ.get(name)
    return default if value is None else [item.strip() for item in value.split(",") if item.strip()]


LogLevel = Literal["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"]


def env_log_level(name: str, default: LogLevel) -> LogLevel:
    value = os.environ.get(name, default).upper()
    for level in get_args(LogLevel):
        if value == level:
            return level
    raise ValueError(f"{name}: expected one of {', '.join(get_args(LogLevel))}, got {value!r}")


def database_from_url(url: str) -> dict[str, object]:
    """``postgres://user:pass@host:port/name?host=/socket/dir`` or ``sqlite:///path``."""
    parts = urlsplit(url)
    if parts.scheme == "sqlite":
        return {"ENGINE": "django.db.backends.sqlite3", "NAME": parts.path[1:] or ":memory:"}
    if parts.scheme not in {"postgres", "postgresql"}:
        raise ValueError(f"MCPSITE_DATABASE_URL: unsupported scheme {parts.scheme!r}")
    query = dict(item.split("=", 1) for item in parts.query.split("&") if "=" in item)
    return {
        "ENGINE": "django.db.backends.postgresql",
        "NAME": unquote(parts.path.lstrip("/")),
        "USER": unquote(parts.username or ""),
        "PASSWORD": unquote(parts.password or ""),
        "HOST": unquote(query.get("host", parts.hostname or "")),
        "PORT": str(parts.port or ""),
        "CONN_MAX_AGE": None,
        "CONN_HEALTH_CHECKS": True,
    }


def embedded_secret_key(var_dir: Path) -> str:
    """The embedded default keeps a generated key in ``var/`` so restarts keep sessions and the key ring."""
    path = var_dir / "secret_key"
    if not path.exists():
        var_dir.mkdir(parents=True, exist_ok=True)
        path.write_text(secrets.token_urlsafe(50))
        path.chmod(0o600)
    return path.read_text().strip()
