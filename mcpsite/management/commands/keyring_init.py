from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from mcpsite.keyring import keyring_ensure_minting


class Command(BaseCommand):
    help = (
        "Make the first requestState key (added and promoted at once: nothing is in flight yet) when the "
        "ring has no minting key; otherwise do nothing. Run after migrate on a first deployment."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        key = keyring_ensure_minting()
        self.stdout.write(f"minting key {key.kid}")
