"""Single-use requestState: a round that was answered cannot be answered again.

The SDK's boundary verifies seal, expiry and bindings, but a sealed state stays valid for its
whole TTL, so a captured retry could be replayed. Two small middlewares close that:

1. `remember_wire_state` (outermost) notes the digest of the *sealed* token, which is unique per
   round (fresh nonce); the plaintext the boundary hands inward is not (two calls with the same
   arguments and answers carry the same plaintext).
2. `refuse_replayed_state` (inside the boundary, so only for state that verified) claims that
   digest; a second claim fails and the round gets the frozen -32602 error.

Claims live where every process can see them: Redis (``SET NX EX``) when deployed, the database
on the embedded default. They only need to outlive the state they name (its TTL), and a Redis
claim costs a fifth of an async ORM INSERT on the retry path (bench/run, two-round call).
"""

from __future__ import annotations

import hashlib
import logging
from contextvars import ContextVar
from datetime import timedelta
from math import ceil
from typing import Any

from django.db import IntegrityError
from django.utils import timezone
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS
from mcp_types.methods import INPUT_REQUIRED_METHODS
from redis.asyncio import Redis

from mcpsite.models import ConsumedRequestState

logger = logging.getLogger(__name__)

_wire_digest: ContextVar[str | None] = ContextVar("mcpsite_wire_state_digest", default=None)


async def remember_wire_state(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
    state = ctx.params.get("requestState") if ctx.params and ctx.method in INPUT_REQUIRED_METHODS else None
    if not isinstance(state, str):
        return await call_next(ctx)
    token = _wire_digest.set(hashlib.sha256(state.encode()).hexdigest())
    try:
        return await call_next(ctx)
    finally:
        _wire_digest.reset(token)


class RefuseReplayedState:
    def __init__(self, *, ttl: float, redis_url: str = "") -> None:
        self.ttl = ttl
        self.redis_url = redis_url
        self._redis: Redis | None = None

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        digest = _wire_digest.get()
        if digest is not None and not await self._claim(digest):
            logger.warning("requestState rejected on %s: replayed", ctx.method)
            raise MCPError(
                code=INVALID_PARAMS,
                message="Invalid or expired requestState",
                data={"reason": "invalid_request_state"},
            )
        return await call_next(ctx)

    async def _claim(self, digest: str) -> bool:
        if self.redis_url:
            if self._redis is None:
                self._redis = Redis.from_url(self.redis_url)
            # A Redis failure raises: the round fails closed rather than risk a replay.
            return bool(await self._redis.set(f"mcpsite:request-state:{digest}", b"1", nx=True, ex=ceil(self.ttl)))
        try:
            await ConsumedRequestState.objects.acreate(
                digest=digest, expires_at=timezone.now() + timedelta(seconds=self.ttl)
            )
        except IntegrityError:
            return False
        return True
