"""Call quotas: MCP requests per window, for a whole tenant and for one person at it.

One tenant must not use up a process that serves many, and one person must not use up their
tenant. Every MCP request at a tenant's endpoint (both generations; a DELETE that ends a session
is never refused) is counted, once it is authenticated, against two budgets of the same window
(``MCPSITE_CALL_QUOTA_WINDOW_SECONDS``, aligned to the clock so every process agrees on it):

- the tenant's (``MCPSITE_CALL_QUOTA_PER_TENANT``, or the tenant's ``call_quota``);
- the person's at that tenant (``MCPSITE_CALL_QUOTA_PER_PERSON``, or the tenant's
  ``call_quota_per_person``): a token's user (issuer and subject, whichever of their OAuth clients
  calls: a fresh client registration is not a fresh budget), or for a caller without a token (a
  public tenant) its address bucket (an IPv6 client by its /64, `mcpsite.net.address_bucket`).

A request is admitted only if both have room, and only an admitted request is counted: a person
refused by their own quota does not use up their tenant's (which would let one person lock out
everyone else), and a request refused by the tenant's quota costs the person nothing. 0 is no
limit. Refused: 429 with ``Retry-After`` (the seconds until the window ends) and a JSON-RPC error
without an id (the body is not read), code `RATE_LIMITED`, whose ``data`` carries the same numbers.

Fixed windows, so every process agrees on when a budget starts again and ``Retry-After`` is exact:
a client may spend a budget at the end of one window and again at the start of the next (twice
the rate for a moment), the known price of a counter this cheap.

Where counted: in this process when there is no ``MCPSITE_REDIS_URL`` (the embedded default is one
process): a dict, emptied when the window turns, exact. Deployed, in Redis, shared by every process,
in shares: a process takes a share of a budget (a hundredth of its limit, 1 to `MAX_SHARE` calls)
with one ``EVAL`` of a script that checks and takes both shares atomically, on a pipelined
connection of the replay claims' client (`mcpsite.keyring.redisclaim`: one round trip, no pool),
and admits that many calls from its dict before it asks again. So a call pays a Redis round trip
once per share (every call only under a limit below 100), not every time: the write that wakes
Redis cost ~110 µs of CPU a call at concurrency 1 (bench/inproc.py, plain call), a third of it. The price: a share a
process took and did not use before the window ends is lost with it (at most a hundredth of the
limit per process), so a quota may refuse a little early, and is exceeded only by the few calls
in flight in one process as its last share runs out. A Redis that
cannot answer fails open (the request is served, and logged): a quota protects the service, it
must not stop it.
"""

from __future__ import annotations

import json
import logging
import math
import time
from dataclasses import dataclass

from django.conf import settings
from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.provider import principal_components
from starlette.types import Receive, Scope, Send

from mcpsite.keyring.redisclaim import ClaimUnavailable, RedisClaims
from mcpsite.net import address_bucket
from tools_app.tenant import TenantInfo

logger = logging.getLogger(__name__)

RATE_LIMITED = -32029
"""The JSON-RPC error code of a refused request: in the implementation-defined server-error range
(-32000 to -32099), used by neither the spec, the SDK (-32000, -32001, -32020 to -32022, -32042)
nor elsewhere in this project; 29 as in HTTP's 429."""

MAX_SHARE = 1000
"""The most calls of one budget a process takes from Redis at a time."""

# KEYS: the person's counter, the tenant's. ARGV: the share wanted of each (0: none wanted), their
# limits, and the counters' lifetime in ms. Takes what is left of each wanted share (at least one
# call), both or neither: answers -1 (the person's budget is spent), -2 (the tenant's), else the
# shares taken as person * 65536 + tenant.
_SCRIPT = b"""
local want_p, want_t = tonumber(ARGV[1]), tonumber(ARGV[2])
local got_p, got_t = 0, 0
if want_p > 0 then
  got_p = math.min(want_p, tonumber(ARGV[3]) - tonumber(redis.call('GET', KEYS[1]) or 0))
  if got_p <= 0 then return -1 end
end
if want_t > 0 then
  got_t = math.min(want_t, tonumber(ARGV[4]) - tonumber(redis.call('GET', KEYS[2]) or 0))
  if got_t <= 0 then return -2 end
end
if got_p > 0 and redis.call('INCRBY', KEYS[1], got_p) == got_p then redis.call('PEXPIRE', KEYS[1], ARGV[5]) end
if got_t > 0 and redis.call('INCRBY', KEYS[2], got_t) == got_t then redis.call('PEXPIRE', KEYS[2], ARGV[5]) end
return got_p * 65536 + got_t
"""
_PERSON, _TENANT = 1, 2


def _share(limit: int) -> int:
    return max(1, min(limit // 100, MAX_SHARE))


@dataclass(frozen=True)
class QuotaSpent:
    """Which quota refused a request, its limit and window, and when to try again (seconds)."""

    scope: str  # "person" or "tenant"
    limit: int
    window_seconds: int
    retry_after: int

    def message(self) -> str:
        who = "this user at this tenant" if self.scope == "person" else "this tenant"
        return (
            f"Too many requests for {who}: at most {self.limit} per {self.window_seconds} s. "
            f"Retry after {self.retry_after} s."
        )

    def body(self) -> bytes:
        data = {
            "reason": "rate_limited",
            "scope": self.scope,
            "limit": self.limit,
            "windowSeconds": self.window_seconds,
            "retryAfter": self.retry_after,
        }
        error = {"code": RATE_LIMITED, "message": self.message(), "data": data}
        return json.dumps({"jsonrpc": "2.0", "id": None, "error": error}, separators=(",", ":")).encode()


class CallQuotas:
    """The two counters of every tenant and person, in Redis or in this process (see module doc)."""

    def __init__(self, *, window_seconds: int, per_tenant: int, per_person: int, redis_url: str = "") -> None:
        if window_seconds <= 0:
            raise ValueError("MCPSITE_CALL_QUOTA_WINDOW_SECONDS must be a positive number of seconds")
        self.window_seconds = window_seconds
        self.per_tenant = per_tenant
        self.per_person = per_person
        self._redis = RedisClaims(redis_url) if redis_url else None
        self._window = -1
        self._counts: dict[str, int] = {}  # in process: calls admitted
        # With Redis: calls left of the share taken of a (budget, limit); a new limit (the tenant's
        # changed) leaves the old share unused and takes a new one, so it applies at once.
        self._left: dict[tuple[str, int], int] = {}
        # With Redis: (budget, limit) pairs Redis said are spent, until the window turns; a new limit
        # (the tenant's changed) is asked again.
        self._spent: set[tuple[str, int]] = set()

    @classmethod
    def from_settings(cls) -> CallQuotas:
        mcpsite = settings.MCPSITE
        return cls(
            window_seconds=mcpsite["CALL_QUOTA_WINDOW_SECONDS"],
            per_tenant=mcpsite["CALL_QUOTA_PER_TENANT"],
            per_person=mcpsite["CALL_QUOTA_PER_PERSON"],
            redis_url=settings.REDIS_URL,
        )

    async def spend(self, *, tenant: TenantInfo, person: str, now: float | None = None) -> QuotaSpent | None:
        """Count one request of `person` at `tenant`; None if admitted, else which quota is spent."""
        person_limit = self.per_person if tenant.call_quota_per_person is None else tenant.call_quota_per_person
        tenant_limit = self.per_tenant if tenant.call_quota is None else tenant.call_quota
        if not person_limit and not tenant_limit:
            return None
        now = time.time() if now is None else now
        window = int(now // self.window_seconds)
        tenant_key = f"mcpsite:quota:{tenant.id}:{window}"
        person_key = f"{tenant_key}:{person}"
        if window != self._window:
            self._counts.clear()  # every key names its window: the last one's are dead
            self._left.clear()
            self._spent.clear()
            self._window = window
        if self._redis is not None:
            verdict = await self._take_shared(person_key, person_limit, tenant_key, tenant_limit)
        else:
            verdict = self._count_here(person_key, person_limit, tenant_key, tenant_limit)
        if not verdict:
            return None
        retry_after = max(1, math.ceil((window + 1) * self.window_seconds - now))
        if verdict == _PERSON:
            return QuotaSpent("person", person_limit, self.window_seconds, retry_after)
        return QuotaSpent("tenant", tenant_limit, self.window_seconds, retry_after)

    async def _take_shared(self, person_key: str, person_limit: int, tenant_key: str, tenant_limit: int) -> int:
        """0 (admitted) or which budget is spent, from this process's shares, taking new ones from
        Redis for the budgets whose share is used up (one round trip for both). A budget Redis
        said is spent stays spent until the window turns (counts only grow): a caller who keeps
        calling past it costs no round trip."""
        person, tenant = (person_key, person_limit), (tenant_key, tenant_limit)
        if person in self._spent:
            return _PERSON
        if tenant in self._spent:
            return _TENANT
        left = self._left
        want_person = _share(person_limit) if person_limit and left.get(person, 0) <= 0 else 0
        want_tenant = _share(tenant_limit) if tenant_limit and left.get(tenant, 0) <= 0 else 0
        if want_person or want_tenant:
            assert self._redis is not None
            try:
                taken = await self._redis.evaluate(
                    _SCRIPT,
                    [person_key, tenant_key],
                    [want_person, want_tenant, person_limit, tenant_limit, self.window_seconds * 2000],
                )
            except ClaimUnavailable as exc:
                logger.warning("call quota not counted (served anyway): %s", exc)
                return 0
            if taken < 0:
                self._spent.add(person if taken == -1 else tenant)
                return _PERSON if taken == -1 else _TENANT
            # Added, not set: another request of this loop may have taken a share meanwhile.
            if want_person:
                left[person] = left.get(person, 0) + taken // 65536
            if want_tenant:
                left[tenant] = left.get(tenant, 0) + taken % 65536
        # A share another request used up during the await leaves a debt (below 0) that the next
        # share repays: at most the few calls in flight at a window's very end go over.
        if person_limit:
            left[person] = left.get(person, 0) - 1
        if tenant_limit:
            left[tenant] = left.get(tenant, 0) - 1
        return 0

    def _count_here(self, person_key: str, person_limit: int, tenant_key: str, tenant_limit: int) -> int:
        """The script's answer, exact, from this process's dict (one event loop: no lock needed)."""
        counts = self._counts
        if person_limit and counts.get(person_key, 0) >= person_limit:
            return _PERSON
        if tenant_limit and counts.get(tenant_key, 0) >= tenant_limit:
            return _TENANT
        if person_limit:
            counts[person_key] = counts.get(person_key, 0) + 1
        if tenant_limit:
            counts[tenant_key] = counts.get(tenant_key, 0) + 1
        return 0


_quotas: CallQuotas | None = None


def call_quotas() -> CallQuotas:
    """This process's counters, made from the settings on first use."""
    global _quotas
    if _quotas is None:
        _quotas = CallQuotas.from_settings()
    return _quotas


def _person(scope: Scope) -> str:
    """Who the person quota counts: the token's user (not its client), else the address bucket."""
    token = get_access_token()
    if token is not None:
        _, issuer, subject = principal_components(token)
        return f"u:{issuer}:{subject}"
    client = scope.get("client")
    return f"a:{address_bucket(client[0]) if client else '?'}"


async def admit(scope: Scope, receive: Receive, send: Send, *, tenant: TenantInfo | None) -> bool:
    """Count this request against its tenant's and person's quotas; True if it may go on, else the
    429 has been answered. Called where the request is authenticated (the token's user is known):
    the 2026-07-28 entry (`endpoint.TenantEndpoint`) and the 2025-11-25 one (`sessions`).
    ``tenant`` None: the tenant's server is not running (nothing will serve the request anyway)."""
    if tenant is None or scope["method"] == "DELETE":  # ending a session frees what quotas protect
        return True
    spent = await call_quotas().spend(tenant=tenant, person=_person(scope))
    if spent is None:
        return True
    logger.info(
        "call quota spent at tenant %s (%s, %d per %d s): 429 for %d s",
        tenant.slug,
        spent.scope,
        spent.limit,
        spent.window_seconds,
        spent.retry_after,
    )
    body = spent.body()
    await send(
        {
            "type": "http.response.start",
            "status": 429,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", b"%d" % len(body)),
                (b"retry-after", b"%d" % spent.retry_after),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
    return False
