from __future__ import annotations

import secrets
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.core.management.base import BaseCommand
from django.db import transaction

from demo.models import File, Folder
from mcpsite import services
from mcpsite.keyring import rotation
from mcpsite.models import Tenant

# long_running: the runnable Tasks toolset, so a Tasks client (the TypeScript ext-tasks one, the
# Inspector) has something to run against `scripts/run` out of the box.
DEMO_TOOLSETS = ("demo", "payments", "long_running")
DEMO_FOLDERS = {"/tmp/empty": [], "/tmp/project": ["main.py", "README.md"]}


STAFF_USERNAME = "admin"


def _embedded() -> bool:
    """The one-laptop default: the SQLite file in var/ that no MCPSITE_DATABASE_URL replaced.
    Sign-ins with passwords printed on a terminal are made there only, never when deployed."""
    database = settings.DATABASES["default"]
    return (
        str(database["ENGINE"]).endswith("sqlite3")
        and Path(str(database["NAME"])) == Path(settings.VAR_DIR) / "db.sqlite3"
    )


def _sign_in(user: AbstractBaseUser, what: str, *, new: bool) -> str:
    """Give `user` a generated password, stored hashed and shown only now; or say how to reset it."""
    name = user.get_username()
    if not new and user.has_usable_password():
        reset = f".venv/bin/python manage.py changepassword {name}"
        return f"{what}: {name} exists; its password was shown once, when it was made (reset it: {reset})"
    password = secrets.token_urlsafe(12)
    user.set_password(password)
    user.save(update_fields=["password"])
    return f"{what}: {name} / {password}   (shown only now; stored hashed)"


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
            sign_ins = []
            if _embedded():
                staff, staff_new = get_user_model().objects.get_or_create(
                    username=STAFF_USERNAME, defaults={"is_staff": True, "is_superuser": True}
                )
                sign_ins = [
                    _sign_in(staff, f"Staff sign-in (admin: {settings.SITE_ROOT}/admin/)", new=staff_new),
                    _sign_in(user, "Member sign-in (consent, checkout and status pages)", new=False),
                ]
        self.stdout.write(f"requestState minting key: {key.kid}")
        self.stdout.write(f"MCP URL: {tenant.resource_url()}")
        self.stdout.write(f"Conformance suite URL (public): {conformance.resource_url()}")
        for line in sign_ins:
            self.stdout.write(line)
        self.stdout.write(f"Bearer token (user demo): {token.token}")
