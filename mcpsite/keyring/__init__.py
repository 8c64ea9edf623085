"""The requestState key ring, in one place.

- `codec`: key material at rest and the in-memory ring the SDK seals and opens requestState with.
- `rotation`: the guarded add / promote / retire services (and how far a change has rolled out).
- `heartbeat`: each serving process reports which ring it has loaded (what the promote guard reads).
- `replay`: a sealed requestState is answered once (the claim middleware and its codec wrapper).
- `redisclaim`: the pipelined Redis connection the replay claims go through.

The rows themselves (`RequestStateKey`, `KeyRingEvent`, `ProcessHeartbeat`, `ConsumedRequestState`)
stay in `mcpsite.models`.
"""

from mcpsite.keyring.codec import (
    KeyRing,
    KeyRingUnavailable,
    new_key_material,
    open_material,
    ring,
    seal_material,
)
from mcpsite.keyring.heartbeat import PROCESS_ID, heartbeat_beat, heartbeat_forget
from mcpsite.keyring.redisclaim import ClaimUnavailable, RedisClaims
from mcpsite.keyring.replay import PayloadNotingCodec, RefuseReplayedState, remember_wire_state, settle_claim
from mcpsite.keyring.rotation import (
    KeyRingRefused,
    Rollout,
    heartbeat_live_within,
    keyring_add_key,
    keyring_ensure_minting,
    keyring_promote,
    keyring_propagation_bound,
    keyring_retire,
    keyring_rollout,
)

__all__ = [
    "PROCESS_ID",
    "ClaimUnavailable",
    "KeyRing",
    "KeyRingRefused",
    "KeyRingUnavailable",
    "PayloadNotingCodec",
    "RedisClaims",
    "RefuseReplayedState",
    "Rollout",
    "heartbeat_beat",
    "heartbeat_forget",
    "heartbeat_live_within",
    "keyring_add_key",
    "keyring_ensure_minting",
    "keyring_promote",
    "keyring_propagation_bound",
    "keyring_retire",
    "keyring_rollout",
    "new_key_material",
    "open_material",
    "remember_wire_state",
    "ring",
    "seal_material",
    "settle_claim",
]
