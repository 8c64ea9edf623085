from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from mcpsite import services
from mcpsite.commands import tenant_named, user_named
from mcpsite.scopes import MCP_SCOPE, scopes_supported


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
            "--scope",
            default=None,
            help=(
                "the scopes it carries, space-separated (default: every scope the tenant's tools need,"
                " so it calls every tool); a tool needing one it lacks answers 403 insufficient_scope"
            ),
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
        scope = options["scope"]
        if scope is not None:
            # Only MCP scopes: an operator scope is never put on a token an MCP client holds.
            known = scopes_supported()
            unknown = [name for name in scope.split() if name not in known]
            if unknown or not scope.split():
                raise CommandError(
                    f"--scope {scope!r}: {', '.join(unknown) or 'no scope'} is not an MCP scope of this site"
                    f" (they are: {' '.join(known)})"
                )
            if MCP_SCOPE not in scope.split():
                raise CommandError(f"--scope {scope!r}: every call needs {MCP_SCOPE!r}; add it")
            scope = " ".join(scope.split())
        try:
            token = services.token_issue(
                tenant=tenant, user=user, scope=scope, expires_in=expires_in, site_root=site_root
            )
        except services.TenantMembershipRequired as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(f"# for {tenant.resource_url(site_root)} (site root from {source}) as {user}")
        self.stdout.write(f"# scope {token.scope!r}")
        self.stdout.write(f"# expires {token.expires:%c}; a server at another site root refuses it")
        self.stdout.write(token.token)
