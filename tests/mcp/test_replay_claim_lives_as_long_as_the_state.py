"""A replay claim lives exactly as long as the state it names: until the state's own ``exp``
(stamped by the process that minted it), not the claiming process's TTL. A claim that expired
first would let the state be answered again for the rest of its life.

The state is minted by the shared server (``MCPSITE_REQUEST_STATE_TTL`` 600) and claimed by a
second process of the same site with a 5-second TTL, as after a deploy that lowered it."""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Callable

import anyio
from redis import Redis

from mcpsite.keyring import ring
from mcpsite.models import ConsumedRequestState
from tests.conftest import Cast, LiveServer
from tests.mcp.clients import text
from tests.mcp.test_request_state import first_round, retry

SHORT_TTL = "5"


def state_exp(state: str) -> float:
    """The ``exp`` sealed into `state`, read with the site's own key ring (as the server does)."""
    ring.reload()
    return float(json.loads(ring.unseal(state))["exp"])


def digest(state: str) -> str:
    return hashlib.sha256(state.encode()).hexdigest()


def test_a_redis_claim_expires_when_the_state_does(
    live: LiveServer, server_factory: Callable[..., LiveServer], cast: Cast
) -> None:
    claimer = server_factory(MCPSITE_SITE_ROOT=live.url, MCPSITE_REQUEST_STATE_TTL=SHORT_TTL)
    try:
        token = cast.token(live)
        state = anyio.run(first_round, live.mcp_url(), token)
        answered = anyio.run(retry, claimer.mcp_url(), token, state)
        assert text(answered) == "Provisioned 'orders' in eu-west-1."
        with Redis.from_url(os.environ["MCPSITE_REDIS_URL"]) as redis:
            left_ms = redis.pttl(f"mcpsite:request-state:{digest(state)}")
        assert abs(left_ms / 1000 - (state_exp(state) - time.time())) < 2.0  # ~600 s, not 5 s
    finally:
        claimer.stop()


def test_a_database_claim_expires_when_the_state_does(
    live: LiveServer, server_factory: Callable[..., LiveServer], cast: Cast
) -> None:
    claimer = server_factory(MCPSITE_SITE_ROOT=live.url, MCPSITE_REQUEST_STATE_TTL=SHORT_TTL, MCPSITE_REDIS_URL="")
    try:
        token = cast.token(live)
        state = anyio.run(first_round, live.mcp_url(), token)
        answered = anyio.run(retry, claimer.mcp_url(), token, state)
        assert text(answered) == "Provisioned 'orders' in eu-west-1."
        row = ConsumedRequestState.objects.get(digest=digest(state))  # `cast` has the database open
        assert abs(row.expires_at.timestamp() - state_exp(state)) < 0.001
    finally:
        claimer.stop()
