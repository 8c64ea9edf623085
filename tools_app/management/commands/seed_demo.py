from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand
from django.db import transaction

from mcpsite import services
from mcpsite.keyring import rotation
from mcpsite.models import Tenant
from tools_app.models import File, Folder

# long_running: the runnable Tasks toolset, so a Tasks client (the TypeScript ext-tasks one, the
# Inspector) has something to run against `scripts/run` out of the box.
DEMO_TOOLSETS = ("demo", "payments", "long_running")
DEMO_FOLDERS = {"/tmp/empty": [], "/tmp/project": ["main.py", "README.md"]}


class Command(BaseCommand):
    help = "Create (idempotently) the demo and conformance tenants, demo data and a minting key; print URLs and token."

    def handle(self, *args: Any, **options: Any) -> None:
        with transaction.atomic():
            tenant, _ = Tenant.objects.get_or_create(
                slug="demo", defaults={"name": "Demo", "toolsets": list(DEMO_TOOLSETS)}
            )
            missing = [name for name in DEMO_TOOLSETS if name not in tenant.toolsets]
            if missing:
                tenant.toolsets = [*tenant.toolsets, *missing]
                tenant.save(update_fields=["toolsets", "updated_at"])
            user, created = get_user_model().objects.get_or_create(username="demo")
            if created:
                user.set_unusable_password()
                user.save()
            tenant.members.add(user)
            conformance, _ = Tenant.objects.get_or_create(
                slug="conformance",
                defaults={"name": "Conformance fixtures", "toolsets": ["conformance"], "public": True},
            )
            for path, files in DEMO_FOLDERS.items():
                folder, _ = Folder.objects.get_or_create(tenant=tenant, path=path)
                for name in files:
                    File.objects.get_or_create(folder=folder, name=name)
            key = rotation.keyring_ensure_minting()
            token = services.token_issue(tenant=tenant, user=user)
        self.stdout.write(f"requestState minting key: {key.kid}")
        self.stdout.write(f"MCP URL: {tenant.resource_url()}")
        self.stdout.write(f"Conformance suite URL (public): {conformance.resource_url()}")
        self.stdout.write(f"Bearer token (user demo): {token.token}")
