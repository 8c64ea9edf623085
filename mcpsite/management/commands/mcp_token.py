from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from mcpsite import services
from mcpsite.models import Tenant


class Command(BaseCommand):
    help = "Issue a bearer token for a user at a tenant's MCP endpoint (the token alone on the last line)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--tenant", required=True, help="tenant slug")
        parser.add_argument("--user", required=True, help="username (a member of the tenant)")
        parser.add_argument("--expires-in", type=int, default=None, help="lifetime in seconds")
        parser.add_argument("--site-root", default=None, help="public base URL the token's resource names")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            tenant = Tenant.objects.get(slug=options["tenant"])
            user = get_user_model().objects.get(username=options["user"])
        except (Tenant.DoesNotExist, get_user_model().DoesNotExist) as exc:
            raise CommandError(str(exc)) from None
        expires_in = timedelta(seconds=options["expires_in"]) if options["expires_in"] else None
        try:
            token = services.token_issue(
                tenant=tenant, user=user, expires_in=expires_in, site_root=options["site_root"]
            )
        except services.TenantMembershipRequired as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(f"# {tenant.resource_url(options['site_root'])} as {user}, expires {token.expires:%c}")
        self.stdout.write(token.token)
