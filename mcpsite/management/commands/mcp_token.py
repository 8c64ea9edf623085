from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from mcpsite import services
from mcpsite.commands import tenant_named, user_named


class Command(BaseCommand):
    help = "Issue a bearer token for a user at a tenant's MCP endpoint (the token alone on the last line)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--tenant", required=True, help="tenant slug")
        parser.add_argument("--user", required=True, help="username (a member of the tenant)")
        parser.add_argument("--expires-in", type=int, default=None, help="lifetime in seconds")
        parser.add_argument(
            "--site-root",
            default=None,
            help="public base URL of the server the token is for (default: MCPSITE_SITE_ROOT)",
        )
        parser.add_argument(
            "--port", type=int, default=None, help="the port a local server listens on: site root http://127.0.0.1:PORT"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        tenant = tenant_named(options["tenant"])
        user = user_named(options["user"])
        expires_in = timedelta(seconds=options["expires_in"]) if options["expires_in"] else None
        # A token is bound to one URL (RFC 8707): a server at another root refuses it, so say
        # which root this one names and where that came from.
        site_root, source = options["site_root"], "--site-root"
        if site_root is None and options["port"] is not None:
            site_root, source = f"http://127.0.0.1:{options['port']}", "--port"
        if site_root is None:
            site_root, source = settings.SITE_ROOT, "MCPSITE_SITE_ROOT / PORT"
        try:
            token = services.token_issue(tenant=tenant, user=user, expires_in=expires_in, site_root=site_root)
        except services.TenantMembershipRequired as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(f"# for {tenant.resource_url(site_root)} (site root from {source}) as {user}")
        self.stdout.write(f"# expires {token.expires:%c}; a server at another site root refuses it")
        self.stdout.write(token.token)
