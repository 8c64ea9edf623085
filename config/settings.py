"""mcpsite settings, configured from the environment.

The embedded default (no variables set) runs on one machine: SQLite, the in-memory
channel layer and an in-process Celery. Deployed, set ``MCPSITE_DATABASE_URL``
(PostgreSQL) and ``MCPSITE_REDIS_URL`` (channel layer and Celery broker).
"""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import urlsplit

from django.core.exceptions import ImproperlyConfigured

from approvals.conf import ApprovalsSettings
from audit.conf import AuditSettings
from config.authorization import oauth2_provider
from config.env import (
    database_from_url,
    embedded_secret_key,
    env_bool,
    env_choice,
    env_float,
    env_int,
    env_list,
    env_log_level,
    env_secret,
    env_str,
)
from config.logconfig import logging_dict
from mcp_tasks.conf import TasksSettings
from mcpsite.conf import McpsiteSettings, SigninSettings
from mcpsite.tracing import exporting
from notifications.conf import NotificationsSettings
from operator_api.conf import OperatorApiSettings

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(os.environ.get("MCPSITE_VAR_DIR", BASE_DIR / "var"))


DEBUG = env_bool("MCPSITE_DEBUG", False)
PORT = env_int("PORT", 8000)
SITE_ROOT = env_str("MCPSITE_SITE_ROOT", f"http://127.0.0.1:{PORT}").rstrip("/")
_site = urlsplit(SITE_ROOT)

SECRET_KEY = env_secret("MCPSITE_SECRET_KEY") or embedded_secret_key(VAR_DIR)
ALLOWED_HOSTS = env_list("MCPSITE_ALLOWED_HOSTS", [_site.hostname or "127.0.0.1", "127.0.0.1", "localhost"])
CSRF_TRUSTED_ORIGINS = [SITE_ROOT]

# Served over https (a site root of https://…): cookies only over https, and HSTS on Django's pages
# (start short; raise it once the whole site is known to stay on https). Plain http is redirected
# only when the TLS proxy is trusted (MCPSITE_TRUSTED_PROXIES): only then does a request say it
# came over https, and a redirect without it would loop. Probes and scrapers call in plain http.
_https = _site.scheme == "https"
SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = _https
SECURE_HSTS_SECONDS = env_int("MCPSITE_HSTS_SECONDS", 3600 if _https else 0)
# Only the operator knows whether every subdomain is on https too (and wants the preload list).
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("MCPSITE_HSTS_INCLUDE_SUBDOMAINS", False)
SECURE_HSTS_PRELOAD = env_bool("MCPSITE_HSTS_PRELOAD", False)
SECURE_SSL_REDIRECT = env_bool("MCPSITE_SSL_REDIRECT", _https and bool(env_list("MCPSITE_TRUSTED_PROXIES", [])))
SECURE_REDIRECT_EXEMPT = [r"^(healthz|readyz|metrics)$"]

# System checks acknowledged (``manage.py check``; `mcpsite.checks`). Always: DOT's warning that
# http redirect URIs are allowed: native MCP clients receive their code on http://127.0.0.1 (RFC
# 8252), and registration allows http on loopback hosts only (`mcpsite.oauth`).
SILENCED_SYSTEM_CHECKS = ["oauth2_provider.W008", *env_list("MCPSITE_SILENCED_SYSTEM_CHECKS", [])]

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "oauth2_provider",
    "rest_framework",
    "drf_spectacular",
    "mcpsite",
    "tools_app",
    "approvals",
    "audit",
    "operator_api",
    "notifications",
    "mcp_tasks",
    "demo",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "mcpsite.cors.OAuthCorsMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "config.urls"
ASGI_APPLICATION = "mcp_server.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

_database_url = env_secret("MCPSITE_DATABASE_URL")
if _database_url:
    DATABASES = {"default": database_from_url(_database_url)}
else:
    VAR_DIR.mkdir(parents=True, exist_ok=True)
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": VAR_DIR / "db.sqlite3",
            # The MCP endpoint and the admin write from several threads; wait rather than fail.
            "OPTIONS": {"timeout": 20, "transaction_mode": "IMMEDIATE", "init_command": "PRAGMA journal_mode=WAL;"},
        }
    }

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

REDIS_URL = env_secret("MCPSITE_REDIS_URL")
if REDIS_URL:
    CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            # redis-py 8 times socket reads out after 5 s, exactly channels_redis's blocking-pop
            # timeout, which broke every listener every few seconds and lost events: read longer.
            "CONFIG": {
                "hosts": [{"address": REDIS_URL, "socket_timeout": 30}],
                "prefix": env_str("MCPSITE_CHANNEL_PREFIX", "mcpsite"),
            },
        }
    }
else:
    CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}

# Celery: Redis when deployed; the embedded default runs tasks in-process (no broker server).
CELERY_BROKER_URL = REDIS_URL or "memory://"
CELERY_TASK_ALWAYS_EAGER = not REDIS_URL
CELERY_TASK_IGNORE_RESULT = True

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = VAR_DIR / "static"
LOGIN_URL = "/accounts/login/"
# Every password check goes through the throttle (`mcpsite.signin`), then Django's own check.
AUTHENTICATION_BACKENDS = ["mcpsite.signin.ThrottledModelBackend"]


# Sign-in throttling (/accounts/login/, /admin/login/), counted in the cache (Redis when deployed):
# after this many failed passwords for one username from one client address, or from one address
# for any usernames, within the lockout period, further attempts from there are refused for that
# period without checking the password. Across addresses an account is only slowed down: from
# FAILURES_PER_ACCOUNT failures on, a delay of 1, 2, 4 ... s, at most DELAY_MAX_SECONDS, which an
# address the account signed in from before skips (`mcpsite.signin`).
SIGNIN: SigninSettings = {
    "FAILURES_PER_ACCOUNT": env_int("MCPSITE_LOGIN_FAILURES_PER_ACCOUNT", 10),
    "FAILURES_PER_ADDRESS": env_int("MCPSITE_LOGIN_FAILURES_PER_ADDRESS", 50),
    "LOCKOUT_SECONDS": env_int("MCPSITE_LOGIN_LOCKOUT_SECONDS", 900),
    "DELAY_MAX_SECONDS": env_int("MCPSITE_LOGIN_DELAY_MAX_SECONDS", 60),
}

ACCESS_TOKEN_SECONDS = env_int("MCPSITE_ACCESS_TOKEN_SECONDS", 3600)
OAUTH2_PROVIDER = oauth2_provider(
    issuer=env_str("MCPSITE_ISSUER", SITE_ROOT), access_token_seconds=ACCESS_TOKEN_SECONDS
)

if REDIS_URL:  # shared by every process: the registration rate limit counts across them
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": REDIS_URL}}


# Everything specific to mcpsite, in one place.
MCPSITE: McpsiteSettings = {
    # The OAuth issuer named in every principal (client, issuer, subject).
    "ISSUER": env_str("MCPSITE_ISSUER", SITE_ROOT),
    # Open dynamic client registration (RFC 7591), at most this many per client address (an IPv6
    # client's /64, `mcpsite.net.address_bucket`) and hour; as many new clients again by Client ID
    # Metadata Document.
    "DCR_PER_HOUR": env_int("MCPSITE_DCR_PER_HOUR", 30),
    # Beat (hourly): a dynamically registered client is deleted once it was registered this long
    # ago, holds nothing live (access token, grant, usable refresh token) and got no token or grant
    # for as long; clients staff create are never deleted. In batches, at most so many a run.
    "DCR_UNUSED_KEEP_SECONDS": env_int("MCPSITE_DCR_UNUSED_KEEP_SECONDS", 30 * 24 * 3600),
    "DCR_PURGE_BATCH_SIZE": env_int("MCPSITE_DCR_PURGE_BATCH_SIZE", 500),
    "DCR_PURGE_BATCHES_PER_RUN": env_int("MCPSITE_DCR_PURGE_BATCHES_PER_RUN", 20),
    # What fetches a Client ID Metadata Document (dotted path to a class with DOT's fetcher interface,
    # e.g. one through an egress proxy): by default DOT's SSRF-guarded fetcher (https, public addresses
    # only, no redirects, bounded size and time). The tests name one that reaches their loopback host.
    "OAUTH_CIMD_FETCHER": env_str("MCPSITE_OAUTH_CIMD_FETCHER", "oauth2_provider.cimd.SafeMetadataFetcher"),
    # Key-encryption key for requestState key material at rest (32+ bytes of secret randomness).
    "KEY_ENCRYPTION_KEY": env_secret("MCPSITE_KEY_ENCRYPTION_KEY"),
    # Lifetime of a sealed requestState (seconds).
    "REQUEST_STATE_TTL": env_float("MCPSITE_REQUEST_STATE_TTL", 600.0),
    # Fallback poll: every process reloads the key ring and tenants at least this often, so a
    # change reaches every process within this bound even if a broadcast is lost.
    "POLL_SECONDS": env_float("MCPSITE_POLL_SECONDS", 5.0),
    # A verified token is trusted from memory for at most this long; revocations are broadcast,
    # and this is the bound when a broadcast is lost.
    "TOKEN_CACHE_SECONDS": env_float("MCPSITE_TOKEN_CACHE_SECONDS", 30.0),
    # Largest MCP request body accepted (bytes); larger gets 413.
    "MAX_REQUEST_BODY": env_int("MCPSITE_MAX_REQUEST_BODY", 1024 * 1024),
    # Largest request line plus headers (bytes) the web process reads (`mcp_server.serve`); larger
    # gets 431 and the connection closes. Bearer tokens and cookies are far smaller.
    "MAX_REQUEST_HEAD": env_int("MCPSITE_MAX_REQUEST_HEAD", 64 * 1024),
    # Addresses (or networks) of the proxies whose X-Forwarded-For / -Proto are believed; none
    # by default, so the client address is the peer's and a client cannot choose it.
    "TRUSTED_PROXIES": env_list("MCPSITE_TRUSTED_PROXIES", []),
    # The web process (`mcp_server.serve`) closes a connection whose request head has not arrived
    # this long after it opened (or after the head's first byte, on a kept-alive connection),
    # or whose body has not arrived this long after its head: a client that sends slowly, or
    # not at all, holds a connection for a bounded time.
    "REQUEST_HEAD_TIMEOUT_SECONDS": env_float("MCPSITE_REQUEST_HEAD_TIMEOUT_SECONDS", 10.0),
    "REQUEST_BODY_TIMEOUT_SECONDS": env_float("MCPSITE_REQUEST_BODY_TIMEOUT_SECONDS", 30.0),
    # Open connections one client address (an IPv6 /64) may hold in one web process; beyond
    # it a new connection gets 429 and is closed. A trusted proxy's own address is not capped
    # (everyone behind it shares it): cap per client at the proxy.
    "MAX_CONNECTIONS_PER_ADDRESS": env_int("MCPSITE_MAX_CONNECTIONS_PER_ADDRESS", 128),
    # Call quotas (`mcp_server.quotas`): MCP requests per window of this many seconds, for a
    # whole tenant and for one person at it (a user across their OAuth clients; an anonymous
    # caller of a public tenant by address, an IPv6 /64). Beyond either: 429 with Retry-After.
    # Counted in Redis when MCPSITE_REDIS_URL is set (shared by every process), else in process.
    # A tenant may override both (admin, operator API); 0 means no limit.
    "CALL_QUOTA_WINDOW_SECONDS": env_int("MCPSITE_CALL_QUOTA_WINDOW_SECONDS", 60),
    "CALL_QUOTA_PER_TENANT": env_int("MCPSITE_CALL_QUOTA_PER_TENANT", 60_000),
    "CALL_QUOTA_PER_PERSON": env_int("MCPSITE_CALL_QUOTA_PER_PERSON", 6_000),
    # On SIGTERM the web process stops accepting, lets requests in flight finish for this long,
    # then closes what is still open and exits. Without a bound a client's standing stream
    # (`subscriptions/listen`, a 2025-11-25 GET stream) keeps the process alive forever. Longer
    # than the approvals hold (20 s), so a held URL-mode round still answers before the exit.
    "SHUTDOWN_GRACE_SECONDS": env_float("MCPSITE_SHUTDOWN_GRACE_SECONDS", 25.0),
    # The web process's event loop (`mcp_server.serve`): the standard library's, or uvloop. At
    # saturation uvloop runs newly arrived requests ahead of the ones it has already answered
    # (MagicStack/uvloop#123): at 64 concurrent calls a few in a hundred waited 0.3-1.3 s for their
    # answer, with our app or a trivial one alike, the standard loop 0.05-0.15 s (bench/README.md).
    "EVENT_LOOP": env_choice("MCPSITE_EVENT_LOOP", "asyncio", ("asyncio", "uvloop")),
    # The SDK's OpenTelemetry span per MCP message; by default on exactly when traces are exported
    # (the standard OTEL_EXPORTER_OTLP_* environment: `mcpsite.tracing`).
    "OTEL_SPANS": env_bool("MCPSITE_OTEL_SPANS", exporting()),
    # A plain 2026-07-28 `tools/call` of a plain tool answered by our compiled layer instead of
    # the SDK's generic handler, with the same answer (`mcp_server.compiled_calls`); off: the SDK's.
    "COMPILED_CALLS": env_bool("MCPSITE_COMPILED_CALLS", True),
    # Prometheus metrics (`mcpsite.metrics`): counted unless off; /metrics answers loopback, and
    # elsewhere a bearer of METRICS_TOKEN; a tenant label only when asked for (small deployments).
    "METRICS": env_bool("MCPSITE_METRICS", True),
    "METRICS_TOKEN": env_secret("MCPSITE_METRICS_TOKEN"),
    "METRICS_PER_TENANT": env_bool("MCPSITE_METRICS_PER_TENANT", False),
    "METRICS_COLLECTORS": [
        "mcpsite.metrics.KeyRingPhases",
        "approvals.metrics.PendingElicitations",
        "mcp_tasks.metrics.TaskStates",
        "audit.metrics.QueuedCalls",
    ],
    # Host and Origin headers the MCP endpoints accept (DNS-rebinding protection).
    "MCP_ALLOWED_HOSTS": env_list("MCPSITE_MCP_ALLOWED_HOSTS", [_site.netloc, "127.0.0.1:*", "localhost:*", "[::1]:*"]),
    "MCP_ALLOWED_ORIGINS": env_list(
        "MCPSITE_MCP_ALLOWED_ORIGINS",
        [SITE_ROOT, "http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"],
    ),
    # Web pages (origins, `scheme://host:port`, or `scheme://host:*` for any port) whose scripts may
    # call the MCP and OAuth endpoints (CORS); none beyond the site's own by default. Each is also
    # accepted by the DNS-rebinding check above, which would otherwise refuse it with 403.
    "CORS_ALLOWED_ORIGINS": env_list("MCPSITE_CORS_ALLOWED_ORIGINS", []),
    # 2025-11-25 sessions one person (the token's issuer and subject, across their OAuth clients;
    # or, on a public tenant, a client address or IPv6 /64) may hold open at once in one process,
    # so one member cannot fill the SDK's shared cap (10,000 per tenant) and lock the others out.
    "MAX_SESSIONS_PER_PRINCIPAL": env_int("MCPSITE_MAX_SESSIONS_PER_PRINCIPAL", 20),
    # A 2025-11-25 session with no request in flight and no open GET stream for this long is closed.
    "SESSION_IDLE_SECONDS": env_float("MCPSITE_SESSION_IDLE_SECONDS", 1800.0),
    # Tenants are built on their first request; a process keeps at most this many loaded (the
    # least recently used let go first) and lets one go once unused this long. One with a
    # request in flight or an open session is never let go (it stays past the cap until idle).
    "TENANTS_MAX_LOADED": env_int("MCPSITE_TENANTS_MAX_LOADED", 1000),
    "TENANT_IDLE_SECONDS": env_float("MCPSITE_TENANT_IDLE_SECONDS", 900.0),
}


# Persistent URL-mode elicitations (the approvals app).
APPROVALS: ApprovalsSettings = {
    # 2026-07-28: a retry round whose elicitation is still pending is held open this long (SSE
    # keep-alive while waiting) and answers the moment it completes; else the client polls again.
    "HOLD_SECONDS": env_float("MCPSITE_APPROVALS_HOLD_SECONDS", 20.0),
    # 2025-11-25: how long a call waits in-call after the user opened the URL; then it answers
    # -32042 (URL elicitation required) and notifications/elicitation/complete says when to retry.
    "LEGACY_WAIT_SECONDS": env_float("MCPSITE_APPROVALS_LEGACY_WAIT_SECONDS", 20.0),
    # Default lifetime of a pending elicitation; a tool's step may ask for another.
    "EXPIRES_SECONDS": env_float("MCPSITE_APPROVALS_EXPIRES_SECONDS", 3600.0),
    # Beat: expire stale rows, and re-send "resolved" events that never left a process.
    "EXPIRE_EVERY_SECONDS": env_float("MCPSITE_APPROVALS_EXPIRE_EVERY_SECONDS", 30.0),
    "REPUBLISH_EVERY_SECONDS": env_float("MCPSITE_APPROVALS_REPUBLISH_EVERY_SECONDS", 30.0),
    # Expiry ends stale rows this many per UPDATE, and stops a tick after this long (the rest
    # wait for the next tick), so a pile of rows expiring together never holds the database long.
    "EXPIRE_BATCH_SIZE": env_int("MCPSITE_APPROVALS_EXPIRE_BATCH_SIZE", 500),
    "EXPIRE_TICK_SECONDS": env_float("MCPSITE_APPROVALS_EXPIRE_TICK_SECONDS", 5.0),
    # Unfinished (pending, unexpired) steps one principal may have open at one tenant; beyond it a
    # call that would open another gets a tool error (a repeat of an open call still reuses its row).
    "MAX_PENDING_PER_PRINCIPAL": env_int("MCPSITE_APPROVALS_MAX_PENDING_PER_PRINCIPAL", 20),
    # Stripe-Signature timestamps older than this are refused (Stripe's own default).
    "WEBHOOK_TOLERANCE_SECONDS": env_int("MCPSITE_APPROVALS_WEBHOOK_TOLERANCE_SECONDS", 300),
    # The built-in sandbox provider's signing secret; derived from SECRET_KEY when unset.
    "SANDBOX_WEBHOOK_SECRET": env_secret("MCPSITE_SANDBOX_WEBHOOK_SECRET"),
}


# The operator API (`/api/v1/`, the operator_api app).
OPERATOR_API: OperatorApiSettings = {
    # Requests one principal (OAuth client and its user) may make, DRF's "<n>/<second|minute|hour|day>".
    "RATE": env_str("MCPSITE_API_RATE", "600/minute"),
    # Rows per page of a list (cursor pagination).
    "PAGE_SIZE": env_int("MCPSITE_API_PAGE_SIZE", 50),
}


# Durable tasks (the mcp_tasks app, the MCP Tasks extension).
TASKS: TasksSettings = {
    # How long a task stays readable (tasks/get) after it was created; then the beat deletes it.
    "TTL_SECONDS": env_int("MCPSITE_TASKS_TTL_SECONDS", 24 * 3600),
    # A task that ended (completed, failed, cancelled) stays readable this long after it ended,
    # within its TTL: its ttlMs is shortened to say so. A busy member makes ~225,000 an hour.
    "FINISHED_KEEP_SECONDS": env_int("MCPSITE_TASKS_FINISHED_KEEP_SECONDS", 3600),
    # The sweep deletes expired tasks this many per transaction and at most this many batches a
    # run (the rest waits for the next run), so no run holds a long lock.
    "DELETE_BATCH_SIZE": env_int("MCPSITE_TASKS_DELETE_BATCH_SIZE", 1000),
    "DELETE_BATCHES_PER_SWEEP": env_int("MCPSITE_TASKS_DELETE_BATCHES_PER_SWEEP", 20),
    # How often a client is told to poll tasks/get.
    "POLL_INTERVAL_MS": env_int("MCPSITE_TASKS_POLL_INTERVAL_MS", 1000),
    # Unfinished (working or input_required) tasks one principal may have at one tenant; beyond
    # it tools/call is refused (-32600, data.reason "too_many_tasks") before any row exists.
    "MAX_LIVE_PER_PRINCIPAL": env_int("MCPSITE_TASKS_MAX_LIVE_PER_PRINCIPAL", 20),
    # A running task renews its lease every third of this; a lease past due means the worker
    # died: the beat retries the task (when its tool declared retries) or marks it failed.
    "LEASE_SECONDS": env_float("MCPSITE_TASKS_LEASE_SECONDS", 30.0),
    # Beat: delete expired tasks, and retry or fail those whose worker was lost.
    "SWEEP_EVERY_SECONDS": env_float("MCPSITE_TASKS_SWEEP_EVERY_SECONDS", 10.0),
    # Run tasks (and the sweep) in the serving process instead of sending them to Celery
    # workers: the embedded default (no broker) does; with Redis, the workers do.
    "IN_PROCESS": env_bool("MCPSITE_TASKS_IN_PROCESS", not REDIS_URL),
    # Task bodies one process runs at once (coroutines on its task runner loop, not threads), and
    # of those, how many one tenant's and one person's may be. A run over a limit waits (its task
    # stays working) and tenants take turns starting theirs; keep the tenant limit well under
    # WORKERS so no one tenant takes every place.
    "WORKERS": env_int("MCPSITE_TASKS_WORKERS", 64),
    "MAX_RUNNING_PER_TENANT": env_int("MCPSITE_TASKS_MAX_RUNNING_PER_TENANT", 8),
    "MAX_RUNNING_PER_PRINCIPAL": env_int("MCPSITE_TASKS_MAX_RUNNING_PER_PRINCIPAL", 4),
    # How a run finds its tenant's MCPServer: the composition root's lookup, named here (as
    # ASGI_APPLICATION is) because mcp_tasks sits below the root and imports nothing of it.
    "SERVER_FOR": "mcp_server.registry.tenant_server_for",
}

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": ["operator_api.auth.OperatorAuthentication"],
    "DEFAULT_PERMISSION_CLASSES": ["operator_api.permissions.OperatorScope", "operator_api.permissions.StaffMayAct"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": ["operator_api.parsers.BoundedJSONParser"],
    "DEFAULT_SCHEMA_CLASS": "operator_api.schema.OperatorAutoSchema",
    "DEFAULT_PAGINATION_CLASS": "operator_api.pagination.NewestFirst",
    "PAGE_SIZE": OPERATOR_API["PAGE_SIZE"],
    "DEFAULT_THROTTLE_CLASSES": ["operator_api.throttling.PerPrincipal"],
    "DEFAULT_THROTTLE_RATES": {"operator": OPERATOR_API["RATE"]},
    "EXCEPTION_HANDLER": "operator_api.errors.exception_handler",
}

SPECTACULAR_SETTINGS = {
    "TITLE": "mcpsite operator API",
    "DESCRIPTION": "Staff act on elicitations, the requestState key ring and tenants with OAuth operator scopes.",
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    "OAUTH2_FLOWS": ["clientCredentials"],
    "OAUTH2_TOKEN_URL": "/o/token/",
    # Each model's `status` choices by its own name (two would otherwise be told apart by a hash).
    "ENUM_NAME_OVERRIDES": {
        "ElicitationStatusEnum": "approvals.models.Elicitation.Status",
        "TaskStatusEnum": "mcp_tasks.models.Task.Status",
    },
}


# The tool-call audit log (the audit app): a row per tools/call, written off the request's path.
AUDIT: AuditSettings = {
    # Off (MCPSITE_AUDIT=0): no layer, no rows (the benchmark's "off" arm).
    "ENABLED": env_bool("MCPSITE_AUDIT", True),
    # Rows older than this are deleted by the beat (housekeeping queue), in bounded batches.
    "RETENTION_DAYS": env_int("MCPSITE_AUDIT_RETENTION_DAYS", 90),
    "DELETE_BATCH_SIZE": env_int("MCPSITE_AUDIT_DELETE_BATCH_SIZE", 5000),
    "DELETE_BATCHES_PER_RUN": env_int("MCPSITE_AUDIT_DELETE_BATCHES_PER_RUN", 20),
    "PURGE_EVERY_SECONDS": env_float("MCPSITE_AUDIT_PURGE_EVERY_SECONDS", 3600.0),
    # Calls one process buffers for writing; beyond it a call's row is dropped and counted
    # (mcpsite_audit_dropped_total{reason="buffer_full"}), never waited for.
    "BUFFER": env_int("MCPSITE_AUDIT_BUFFER", 20000),
    # Rows per INSERT, and how often the writer thread writes what is buffered (sooner when a
    # batch's worth is waiting).
    "BATCH_SIZE": env_int("MCPSITE_AUDIT_BATCH_SIZE", 2000),
    "FLUSH_SECONDS": env_float("MCPSITE_AUDIT_FLUSH_SECONDS", 2.0),
    # Who writes the rows (audit/handoff.py). "process": the serving process's writer thread (the
    # embedded default). "redis" (the default with MCPSITE_REDIS_URL): the writer thread hands the
    # calls to a Redis list, and the beat's drain job writes them, outside the serving processes.
    "WRITER": env_choice("MCPSITE_AUDIT_WRITER", "redis" if REDIS_URL else "process", ("process", "redis")),
    "QUEUE_KEY": env_str("MCPSITE_AUDIT_QUEUE_KEY", "mcpsite:audit:calls"),
    # Batches (of at most 200 calls) the list holds; beyond it a batch is dropped and counted
    # (reason="buffer_full") while the drain cannot keep up or is not running.
    "QUEUE_MAX_BATCHES": env_int("MCPSITE_AUDIT_QUEUE_MAX_BATCHES", 2000),
    # Beat: write what is queued, at most this many batches a run (the next run takes the rest).
    "DRAIN_EVERY_SECONDS": env_float("MCPSITE_AUDIT_DRAIN_EVERY_SECONDS", 1.0),
    "DRAIN_BATCHES_PER_RUN": env_int("MCPSITE_AUDIT_DRAIN_BATCHES_PER_RUN", 200),
    # Rows per query of the operator API's JSON Lines export (it streams any range in such pages).
    "STREAM_BATCH_SIZE": env_int("MCPSITE_AUDIT_STREAM_BATCH_SIZE", 1000),
}
if AUDIT["WRITER"] == "redis" and not REDIS_URL:
    raise ImproperlyConfigured("MCPSITE_AUDIT_WRITER: redis needs MCPSITE_REDIS_URL")


# Outgoing notifications (the notifications app): signed events posted to operators' URLs.
NOTIFICATIONS: NotificationsSettings = {
    # One attempt waits this long for each of connect, send and each read of the answer.
    "TIMEOUT_SECONDS": env_float("MCPSITE_NOTIFICATIONS_TIMEOUT_SECONDS", 5.0),
    # Attempts per event and endpoint before it is marked failed (staff may "retry now").
    "MAX_ATTEMPTS": env_int("MCPSITE_NOTIFICATIONS_MAX_ATTEMPTS", 8),
    # Retry n waits about BASE * 2**(n-1) seconds (jittered to 50-100 %), at most MAX.
    "BACKOFF_BASE_SECONDS": env_float("MCPSITE_NOTIFICATIONS_BACKOFF_BASE_SECONDS", 30.0),
    "BACKOFF_MAX_SECONDS": env_float("MCPSITE_NOTIFICATIONS_BACKOFF_MAX_SECONDS", 6 * 3600.0),
    # Due deliveries one batch takes (tenants in turn; a beat tick sends batches for up to one
    # interval), and how many one endpoint may have in flight at once, so a slow or dead receiver
    # cannot take every sender.
    "BATCH_SIZE": env_int("MCPSITE_NOTIFICATIONS_BATCH_SIZE", 50),
    "MAX_IN_FLIGHT_PER_ENDPOINT": env_int("MCPSITE_NOTIFICATIONS_MAX_IN_FLIGHT_PER_ENDPOINT", 4),
    # Beat: send what is due (new events on the embedded default, and every retry).
    "SEND_EVERY_SECONDS": env_float("MCPSITE_NOTIFICATIONS_SEND_EVERY_SECONDS", 5.0),
    # Tests only: allow endpoints on loopback addresses (and plain http to them). Never in production:
    # endpoint URLs are set by operators and must not reach this machine or its private network.
    "ALLOW_LOOPBACK": env_bool("MCPSITE_NOTIFICATIONS_ALLOW_LOOPBACK", False),
}

# Each kind of background work on a Celery queue of its own, so none can hold another's slots:
# task runs (`tasks`), outgoing notifications (`notifications`), and the beat's own jobs
# (`housekeeping`: expiry, republish, clean-ups, the task sweep; anything unrouted too). A worker
# started without -Q takes all three; deployed, run one per queue (README, Deploying). The
# embedded beat gives each queue its own thread (mcp_server/beat.py).
CELERY_TASK_QUEUES: dict[str, dict[str, str]] = {"tasks": {}, "notifications": {}, "housekeeping": {}}
CELERY_TASK_DEFAULT_QUEUE = "housekeeping"
CELERY_TASK_ROUTES = {
    "mcp_tasks.tasks.task_run": {"queue": "tasks"},
    "notifications.tasks.*": {"queue": "notifications"},
}

# Run by `celery -A config beat` (or a worker's --beat) when deployed, in-process on the embedded default.
CELERY_BEAT_SCHEDULE = {
    "approvals-expire": {
        "task": "approvals.tasks.elicitations_expire",
        "schedule": APPROVALS["EXPIRE_EVERY_SECONDS"],
    },
    "approvals-republish": {
        "task": "approvals.tasks.elicitations_republish",
        "schedule": APPROVALS["REPUBLISH_EVERY_SECONDS"],
    },
    "tokens-clear-expired": {"task": "mcpsite.tasks.tokens_clear_expired", "schedule": 3600.0},
    "request-states-purge": {"task": "mcpsite.tasks.request_states_purge", "schedule": 3600.0},
    "heartbeats-purge": {"task": "mcpsite.tasks.heartbeats_purge", "schedule": 3600.0},
    "dcr-clients-purge": {"task": "mcpsite.tasks.dcr_clients_purge", "schedule": 3600.0},
    "notifications-send-due": {
        "task": "notifications.tasks.notifications_send_due",
        "schedule": NOTIFICATIONS["SEND_EVERY_SECONDS"],
    },
    "tasks-sweep": {"task": "mcp_tasks.tasks.tasks_sweep", "schedule": TASKS["SWEEP_EVERY_SECONDS"]},
    "audit-purge": {"task": "audit.tasks.toolcalls_purge", "schedule": AUDIT["PURGE_EVERY_SECONDS"]},
}
if REDIS_URL:  # the calls the serving processes hand to Redis (AUDIT["WRITER"]), written as rows
    CELERY_BEAT_SCHEDULE["audit-drain"] = {
        "task": "audit.tasks.toolcalls_drain",
        "schedule": AUDIT["DRAIN_EVERY_SECONDS"],
    }

LOG_LEVEL = env_log_level("MCPSITE_LOG_LEVEL", "INFO")
LOG_FORMAT = env_choice("MCPSITE_LOG_FORMAT", "plain", ("plain", "json"))
LOGGING = logging_dict(level=LOG_LEVEL, log_format=LOG_FORMAT)
# JSON logs: Celery keeps the root handler above instead of installing its own plain one.
CELERY_WORKER_HIJACK_ROOT_LOGGER = LOG_FORMAT == "plain"
