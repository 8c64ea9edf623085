"""Prepare mcpsite for the benchmark (idempotent): tenant `bench` serving the `bench` toolset, its
member `bench`, and a minting requestState key; with `--payments` also tenant `benchpay` serving the
`payments` toolset (parts 4 and 5). Run with mcpsite's settings from the repo root;
the token comes from `manage.py mcp_token` and the peer's user from `seed_peer`."""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

import django

django.setup()

from django.contrib.auth import get_user_model  # noqa: E402

from mcpsite.keyring import rotation  # noqa: E402
from mcpsite.models import Tenant  # noqa: E402


def main() -> None:
    tenant, _ = Tenant.objects.update_or_create(slug="bench", defaults={"name": "Benchmark", "toolsets": ["bench"]})
    user, _ = get_user_model().objects.get_or_create(username="bench")
    tenant.members.add(user)
    if "--payments" in sys.argv:
        # Parts 4 and 5 (URL mode): their own tenant, so parts 1-2 measure the `bench` tenant unchanged.
        payments, _ = Tenant.objects.update_or_create(
            slug="benchpay", defaults={"name": "Benchmark (payments)", "toolsets": ["payments"]}
        )
        payments.members.add(user)
    rotation.keyring_ensure_minting()


if __name__ == "__main__":
    main()
