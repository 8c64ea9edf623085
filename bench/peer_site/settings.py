"""Baseline 2, the peer: django-mcpz (a synchronous Django MCP view) with the same two tools,
on PostgreSQL with its documented bearer-token auth, served by gunicorn (gthread).

Deliberately lean, so the peer is measured at its best: no middleware (its view needs none),
persistent database connections, DEBUG off. Configured from the environment by `bench/bench.py`.
"""

from __future__ import annotations

import os
from urllib.parse import urlsplit

_db = urlsplit(os.environ["BENCH_PEER_DATABASE_URL"])

SECRET_KEY = os.environ.get("BENCH_PEER_SECRET_KEY", "bench-only-peer-secret-key-0123456789abcdef")
DEBUG = False
ALLOWED_HOSTS = ["127.0.0.1", "localhost"]
USE_TZ = True
ROOT_URLCONF = "bench.peer_site.urls"
WSGI_APPLICATION = "bench.peer_site.wsgi.application"
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
INSTALLED_APPS = [
    "django.contrib.contenttypes",
    "django.contrib.auth",
    "django_mcpz",
    "django_mcpz.bearer_tokens",
]
MIDDLEWARE: list[str] = []
DATABASES = {
    "default": {
        "ENGINE": "django.db.backends.postgresql",
        "NAME": _db.path.lstrip("/"),
        "USER": _db.username or "postgres",
        "PASSWORD": _db.password or "",
        "HOST": _db.hostname or "127.0.0.1",
        "PORT": str(_db.port or 5432),
        "CONN_MAX_AGE": 600,
        "CONN_HEALTH_CHECKS": False,
    }
}
