"""The key ring through the operator API: listed without material, and every step held to the
admin's guards, refused as JSON with the reason and how long to wait, and audited."""

from __future__ import annotations

import time

from mcpsite.models import KeyRingEvent, RequestStateKey
from tests.api.conftest import api, machine_client
from tests.conftest import Cast, LiveServer

KEY_FIELDS = {"kid", "phase", "created_at", "minting_since", "minting_until", "retired_at", "loaded_by"}


def test_the_ring_is_listed_without_any_key_material(server: LiveServer, cast: Cast) -> None:
    with api(server, machine_client(server, "ops", ["keys:rotate"]).token) as http:
        response = http.get("/keys/")
    assert response.status_code == 200
    keys = response.json()
    assert keys and all(set(key) == KEY_FIELDS for key in keys)
    assert sorted(key["kid"] for key in keys) == sorted(RequestStateKey.objects.values_list("kid", flat=True))
    assert "material" not in response.text


def test_each_step_is_guarded_as_in_the_admin_and_audited(server: LiveServer, cast: Cast) -> None:
    operator = machine_client(server, "ops", ["keys:rotate"])
    old = RequestStateKey.objects.get(phase=RequestStateKey.Phase.MINTING)
    with api(server, operator.token) as http:
        minting = http.post(f"/keys/{old.kid}/retire/", json={})
        assert (minting.status_code, minting.json()) == (
            409,
            {"detail": f"Key {old.kid} is minting; promote another key first.", "wait_seconds": None},
        )
        assert "retry-after" not in minting.headers

        added = http.post("/keys/")
        assert (added.status_code, added.json()["phase"]) == (201, "verifying")
        new = added.json()["kid"]
        deadline = time.monotonic() + 30
        while (promoted := http.post(f"/keys/{new}/promote/")).status_code == 409:
            body = promoted.json()  # the rollout guard: not every live process has loaded it yet
            assert "live processes have loaded key" in body["detail"] and body["wait_seconds"] > 0, body
            assert time.monotonic() < deadline
            time.sleep(0.2)
        assert (promoted.status_code, promoted.json()["phase"]) == (200, "minting")

        early = http.post(f"/keys/{old.kid}/retire/", json={})
        assert early.status_code == 409
        body = early.json()
        assert body["detail"].startswith(f"State sealed with key {old.kid} may still be in flight until ")
        assert 600 <= body["wait_seconds"] <= 611  # one requestState TTL plus the propagation bound
        assert early.headers["retry-after"] == str(int(-(-body["wait_seconds"] // 1)))

        spare = http.post("/keys/").json()["kid"]  # never minted: nothing it sealed can be in flight
        retired = http.post(f"/keys/{spare}/retire/", json={})
        assert (retired.status_code, retired.json()["phase"]) == (200, "retired")
        again = http.post(f"/keys/{spare}/promote/")
        assert (again.status_code, again.json()) == (
            409,
            {"detail": f"Key {spare} is retired and cannot mint again.", "wait_seconds": None},
        )
        assert http.post("/keys/none/promote/").status_code == 404

    audit = KeyRingEvent.objects.filter(oauth_client=operator.client_id).order_by("at")
    assert [(e.action, e.kid, e.actor and e.actor.username, e.via) for e in audit] == [
        ("added", new, "ops", "api"),
        ("promoted", new, "ops", "api"),
        ("added", spare, "ops", "api"),
        ("retired", spare, "ops", "api"),
    ]
