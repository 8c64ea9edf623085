"""Key ring rotation: add, promote, retire, each guarded so no round in flight breaks. Admin, the
operator API, commands and tests call these."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db import transaction
from django.utils import timezone

from mcpsite import signals
from mcpsite.actors import COMMAND, Actor
from mcpsite.conf import mcpsite_settings
from mcpsite.exceptions import McpsiteError
from mcpsite.keyring.codec import new_key_material, seal_material
from mcpsite.models import KeyRingEvent, ProcessHeartbeat, RequestStateKey


class KeyRingRefused(McpsiteError):
    """A rotation step that would break rounds in flight; the message says why and how long to wait."""

    def __init__(self, message: str, *, wait_seconds: float | None = None) -> None:
        super().__init__(message)
        self.wait_seconds = wait_seconds


def keyring_propagation_bound() -> float:
    """How long a ring change may take to reach every process: a broadcast, or at worst the next
    poll (which also refreshes the process's heartbeat)."""
    return 2 * mcpsite_settings()["POLL_SECONDS"]


def heartbeat_live_within() -> float:
    return 3 * mcpsite_settings()["POLL_SECONDS"]


@dataclass(frozen=True)
class Rollout:
    """How many live processes have loaded a ring that contains a key."""

    live: int
    loaded: int

    @property
    def complete(self) -> bool:
        return self.live > 0 and self.loaded == self.live


def keyring_rollout(*, kid: str) -> Rollout:
    live = list(ProcessHeartbeat.objects.live(within=heartbeat_live_within()).values_list("ring_kids", flat=True))
    return Rollout(live=len(live), loaded=sum(1 for kids in live if kid in kids))


def _audit(action: str, key: RequestStateKey, actor: Actor, note: str = "") -> None:
    event = KeyRingEvent.objects.create(action=action, kid=key.kid, note=note, **actor.audit_fields())
    signals.keyring_changed.send(sender=KeyRingEvent, event=event)


@transaction.atomic
def keyring_add_key(*, actor: Actor = COMMAND) -> RequestStateKey:
    """Generate a key server-side; it starts as verifying, so every process can learn it before it mints.

    `actor` (here and below): who took the step, audited."""
    kid, material = new_key_material()
    while RequestStateKey.objects.filter(kid=kid).exists():
        kid, material = new_key_material()
    key = RequestStateKey.objects.create(kid=kid, material=seal_material(kid, material))
    _audit(KeyRingEvent.Action.ADDED, key, actor)
    return key


@transaction.atomic
def keyring_promote(
    *,
    key: RequestStateKey,
    actor: Actor = COMMAND,
    check_rollout: bool = True,
) -> RequestStateKey:
    """Make `key` the minting key; the previous minting key keeps verifying.

    Refused until every live process has loaded a ring containing `key` (so no process is handed
    state it cannot open); when no process reports, until the propagation bound has passed since
    the key was added.
    """
    now = timezone.now()
    key = RequestStateKey.objects.select_for_update().get(pk=key.pk)
    if key.phase == RequestStateKey.Phase.RETIRED:
        raise KeyRingRefused(f"Key {key.kid} is retired and cannot mint again.")
    if key.phase == RequestStateKey.Phase.MINTING:
        return key
    if check_rollout:
        _check_promotable(key, now)
    previous = list(RequestStateKey.objects.select_for_update().filter(phase=RequestStateKey.Phase.MINTING))
    RequestStateKey.objects.filter(pk__in=[p.pk for p in previous]).update(
        phase=RequestStateKey.Phase.VERIFYING, minting_until=now
    )
    key.phase = RequestStateKey.Phase.MINTING
    key.minting_since = now
    key.save(update_fields=["phase", "minting_since"])
    replaced = f"; {previous[0].kid} keeps verifying" if previous else ""
    _audit(KeyRingEvent.Action.PROMOTED, key, actor, f"now minting{replaced}")
    return key


def _check_promotable(key: RequestStateKey, now: datetime) -> None:
    bound = keyring_propagation_bound()
    rollout = keyring_rollout(kid=key.kid)
    if rollout.live:
        if not rollout.complete:
            raise KeyRingRefused(
                f"Only {rollout.loaded} of {rollout.live} live processes have loaded key {key.kid}; "
                f"they reload within {bound:.0f} s. Try again then.",
                wait_seconds=bound,
            )
        return
    waited = (now - key.created_at).total_seconds()
    if waited < bound:
        raise KeyRingRefused(
            f"No process reports its key ring, so wait until every process has surely loaded key {key.kid}: "
            f"{bound - waited:.0f} s more.",
            wait_seconds=bound - waited,
        )


@transaction.atomic
def keyring_retire(
    *,
    key: RequestStateKey,
    actor: Actor = COMMAND,
    now_override: bool = False,
) -> RequestStateKey:
    """Stop verifying state sealed with `key`.

    Refused while it mints, and until one requestState TTL plus the propagation bound has passed
    since it stopped minting (state it sealed may still be in flight). `now_override` is for a
    compromised key: every round in flight that was sealed with it then fails with -32602.
    """
    now = timezone.now()
    key = RequestStateKey.objects.select_for_update().get(pk=key.pk)
    if key.phase == RequestStateKey.Phase.RETIRED:
        return key
    if key.phase == RequestStateKey.Phase.MINTING:
        raise KeyRingRefused(f"Key {key.kid} is minting; promote another key first.")
    note = ""
    if key.minting_until is not None:
        safe_at = key.minting_until + timedelta(
            seconds=mcpsite_settings()["REQUEST_STATE_TTL"] + keyring_propagation_bound()
        )
        if now < safe_at and not now_override:
            wait = (safe_at - now).total_seconds()
            raise KeyRingRefused(
                f"State sealed with key {key.kid} may still be in flight until {safe_at:%H:%M:%S} UTC; "
                f"retire it in {wait:.0f} s (or use 'retire now' if the key is compromised).",
                wait_seconds=wait,
            )
        if now < safe_at:
            note = f"override: rounds sealed with it before {key.minting_until:%H:%M:%S} UTC now fail with -32602"
    key.phase = RequestStateKey.Phase.RETIRED
    key.retired_at = now
    key.save(update_fields=["phase", "retired_at"])
    action = KeyRingEvent.Action.RETIRED_NOW if now_override else KeyRingEvent.Action.RETIRED
    _audit(action, key, actor, note)
    return key


@transaction.atomic
def keyring_ensure_minting() -> RequestStateKey:
    """Bootstrap: a minting key, creating and promoting one if the ring has none (nothing is in flight)."""
    existing = RequestStateKey.objects.filter(phase=RequestStateKey.Phase.MINTING).first()
    if existing is not None:
        return existing
    return keyring_promote(key=keyring_add_key(), check_rollout=False)
