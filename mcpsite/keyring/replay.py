"""Single-use requestState: a round that was answered cannot be answered again.

The SDK's boundary verifies seal, expiry and bindings, but a sealed state stays valid for its
whole TTL, so a captured retry could be replayed. Two small middlewares close that:

1. `remember_wire_state` (outermost) notes the digest of the *sealed* token, which is unique per
   round (fresh nonce); the plaintext the boundary hands inward is not (two calls with the same
   arguments and answers carry the same plaintext).
2. `RefuseReplayedState` (inside the boundary, so only for state that verified) claims that
   digest; a second claim fails and the round gets the frozen -32602 error.

Claims live where every process can see them: Redis (``SET NX PXAT``) when deployed, the
database on the embedded default. A claim must live exactly as long as the state it names: until
the state's own ``exp``, which the minting process stamped with *its* TTL. The claiming process's
TTL may be shorter (processes configured differently, or a TTL lowered during a deploy), and a
claim that expires before its state reopens the replay. The SDK's boundary reads ``exp`` out of
the payload the codec opened and hands inward only the inner state, so `PayloadNotingCodec`
(the codec the tenants seal with: the key ring, wrapped) notes the opened payload for the round
`remember_wire_state` opened; the claim reads ``exp`` from it. No second decrypt, and the ``exp``
used is the authenticated one the boundary has just checked (the claim runs only after it).

A Redis claim costs a fifth of an async ORM INSERT on the retry path (bench/run, two-round call);
it goes through `mcpsite.keyring.redisclaim` (one pipelined connection), a tenth of redis-py's CPU.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import re
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import UTC, datetime
from math import ceil
from typing import Any

from django.db import IntegrityError
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.lowlevel.server import RequestHandler, Server
from mcp.server.request_state import RequestStateCodec
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS
from mcp_types.methods import INPUT_REQUIRED_METHODS

from mcpsite import metrics
from mcpsite.keyring.redisclaim import RedisClaims
from mcpsite.models import ConsumedRequestState

logger = logging.getLogger(__name__)


@dataclass
class _Round:
    """The sealed state one request carries, and (once the codec opened it) its payload."""

    wire: str
    digest: str
    payload: bytes | None = None
    claim: asyncio.Future[bool] | None = None
    """The claim in flight, until `_settle` has its answer (see `RefuseReplayedState`)."""

    def expires_at(self) -> float | None:
        """The state's own ``exp`` (epoch seconds), or None if no verified payload was noted."""
        if self.payload is None:
            return None
        # The boundary has just parsed this payload and keeps the result to itself; parsing it
        # again was a tenth of our own cost on the retry. The SDK writes its claims compact,
        # in a fixed order (``{"v":..,"iat":..,"exp":..,``), so the prefix is read when it is
        # exactly that (only the ring's own minting gets here: the payload is authenticated),
        # and anything else is parsed whole.
        prefix = _CLAIMS_PREFIX.match(self.payload)
        if prefix is not None:
            return float(prefix[1])
        exp = json.loads(self.payload).get("exp")
        return float(exp) if isinstance(exp, int | float) else None


_CLAIMS_PREFIX = re.compile(rb'\{"v":\d+,"iat":-?[0-9.eE+-]+,"exp":(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?),')


_round: ContextVar[_Round | None] = ContextVar("mcpsite_request_state_round", default=None)


async def remember_wire_state(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
    state = ctx.params.get("requestState") if ctx.params and ctx.method in INPUT_REQUIRED_METHODS else None
    if not isinstance(state, str):
        return await call_next(ctx)
    token = _round.set(_Round(wire=state, digest=hashlib.sha256(state.encode()).hexdigest()))
    try:
        return await call_next(ctx)
    finally:
        _round.reset(token)


class PayloadNotingCodec:
    """A `RequestStateCodec` that notes what it opened for the round in flight.

    Only a token equal to the round's wire state is noted, so a payload never stands for another
    token; `unseal` raising (anything not minted by the ring, unmodified) notes nothing.
    """

    def __init__(self, codec: RequestStateCodec) -> None:
        self.codec = codec

    def seal(self, payload: bytes) -> str:
        return self.codec.seal(payload)

    def unseal(self, token: str) -> bytes:
        payload = self.codec.unseal(token)
        current = _round.get()
        if current is not None and current.wire == token:
            current.payload = payload
        return payload


def _claim_key(digest: str) -> str:
    return f"mcpsite:request-state:{digest}"


def _refuse() -> MCPError:
    return MCPError(
        code=INVALID_PARAMS, message="Invalid or expired requestState", data={"reason": "invalid_request_state"}
    )


async def _settle(current: _Round, method: str) -> None:
    """Wait for the round's claim in flight, if any: refuse the round if it was claimed before (a
    Redis that cannot say raises `ClaimUnavailable`, failing closed)."""
    claim, current.claim = current.claim, None
    if claim is not None and not await claim:
        logger.warning("requestState rejected on %s: replayed", method)
        metrics.count_refusal("replayed")
        raise _refuse()


async def settle_claim(method: str) -> None:
    """What a method's handler awaits before it runs anything of the tool: the claim of the round's
    state, sent by `RefuseReplayedState` ahead of it (a no-op for a request without one). Raises the
    frozen refusal if the state was claimed before. `guard_handlers` puts it in front of the SDK's
    handlers; `mcp_server.compiled_calls`, answering in place of the handler, awaits it itself."""
    current = _round.get()
    if current is not None:
        await _settle(current, method)


def _settled_first(handler: RequestHandler[Any, Any]) -> RequestHandler[Any, Any]:
    async def settled_first(ctx: ServerRequestContext[Any, Any], params: Any) -> Any:
        await settle_claim(ctx.method)
        return await handler(ctx, params)

    return settled_first


class RefuseReplayedState:
    """Claims each verified retry's state; a state claimed before refuses the round.

    With Redis, the claim is sent as soon as the state has verified and is awaited by the method's
    handler before it runs (`guard_handlers`), so the SDK's validation of the request (about a tenth
    of a retry's CPU) runs while Redis answers instead of after. Nothing of the tool, its resolvers
    included, runs before the answer; a request that fails before its handler still gets the
    claim's refusal first, as when the claim came first; and the claim is sent at the same point,
    with the same key and expiry, so a state is spent exactly when it was before.
    """

    def __init__(self, *, redis_url: str = "") -> None:
        self.redis_url = redis_url
        self._redis = RedisClaims(redis_url) if redis_url else None
        self._settled_by_handler: set[str] = set()

    def guard_handlers(self, server: Server[Any]) -> None:
        """Make the handlers of the methods that carry requestState wait for the round's claim."""
        for method in INPUT_REQUIRED_METHODS:
            entry = server.get_request_handler(method)
            if entry is not None and method not in self._settled_by_handler:
                server.add_request_handler(method, entry.params_type, _settled_first(entry.handler))
                self._settled_by_handler.add(method)

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        current = _round.get()
        if current is None:
            return await call_next(ctx)
        exp = current.expires_at()
        if exp is None:
            # The boundary verified a state our codec did not open: the codec is not wired
            # through `PayloadNotingCodec`. Fail closed rather than guess how long to claim it.
            logger.error("requestState rejected on %s: no verified expiry to claim it until", ctx.method)
            metrics.count_refusal("no verified expiry")
            raise _refuse()
        if self._redis is None or ctx.method not in self._settled_by_handler:
            if not await self._claim(current.digest, exp):
                logger.warning("requestState rejected on %s: replayed", ctx.method)
                metrics.count_refusal("replayed")
                raise _refuse()
            return await call_next(ctx)
        current.claim = self._redis.claim_soon(_claim_key(current.digest), ceil(exp * 1000))
        try:
            result = await call_next(ctx)
        except Exception:
            await _settle(current, ctx.method)  # the claim's refusal (or failure) comes first
            raise
        except BaseException:  # cancelled: nobody waits for the answer (the claim still counts)
            if current.claim is not None:
                current.claim.cancel()
            raise
        await _settle(current, ctx.method)  # settled already by the handler; kept for any path that was not
        return result

    async def _claim(self, digest: str, exp: float) -> bool:
        """Claim `digest` until `exp`; False if it was claimed before."""
        if self._redis is not None:
            # A Redis failure raises (`ClaimUnavailable`): the round fails closed rather than risk a replay.
            return await self._redis.claim(_claim_key(digest), ceil(exp * 1000))
        try:
            await ConsumedRequestState.objects.acreate(digest=digest, expires_at=datetime.fromtimestamp(exp, tz=UTC))
        except IntegrityError:
            return False
        return True
