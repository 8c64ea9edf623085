"""Codec benchmark, in-process: seal + unseal of one round's requestState payload with our
database key ring (`mcpsite.keyring.KeyRing`, loaded from PostgreSQL the way a server loads it)
against the SDK's built-in `AESGCMRequestStateCodec`. Alternates the two over repetitions.

    python bench/codec.py [--payload-file F] [--reps 5] [--number 20000]

Prints one line ``BENCH_RESULT {json}`` with the per-round time (µs) of each repetition.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import sys
import timeit
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

import django

django.setup()

from mcp.server.request_state import AESGCMRequestStateCodec  # noqa: E402

from mcpsite.keyring import KeyRing  # noqa: E402

# The shape of a real envelope (claims + the resolver's inner state), for when no payload captured
# from a running server is given.
SYNTHETIC = json.dumps(
    {
        "v": 1,
        "iat": 1764700000.123,
        "exp": 1764700600.123,
        "m": "tools/call",
        "t": "greet",
        "a": "Jq5y3Yb1c0bqkq9QhY2m4w",
        "aud": "mcpsite:bench",
        "p": "kT2pWmYq8Xo0s3b1nA4rVw7LZy2cQe5t",
        "s": json.dumps({"resolved": {}, "pending": "demo.tools.bench:ask_colour", "answers": {}}),
    },
    separators=(",", ":"),
).encode()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--payload-file", type=Path)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--number", type=int, default=20000)
    args = parser.parse_args()
    payload = args.payload_file.read_bytes() if args.payload_file else SYNTHETIC

    ours = KeyRing()
    ours.reload()  # from the database, as every serving process does at start-up
    if ours.minting_kid is None:
        raise SystemExit("the key ring has no minting key (run bench/seed.py first)")
    sdk = AESGCMRequestStateCodec([os.urandom(32)])
    for codec in (ours, sdk):
        assert codec.unseal(codec.seal(payload)) == payload

    def round_trip(codec: KeyRing | AESGCMRequestStateCodec) -> None:
        codec.unseal(codec.seal(payload))

    times: dict[str, list[float]] = {"ours": [], "sdk": []}
    for rep in range(args.reps):
        order: list[tuple[str, KeyRing | AESGCMRequestStateCodec]] = [("ours", ours), ("sdk", sdk)]
        if rep % 2:
            order.reverse()
        for name, codec in order:
            seconds = timeit.timeit(functools.partial(round_trip, codec), number=args.number)
            times[name].append(seconds / args.number * 1e6)
    print("BENCH_RESULT " + json.dumps({"payload_bytes": len(payload), "us_per_round": times}), flush=True)


if __name__ == "__main__":
    main()
