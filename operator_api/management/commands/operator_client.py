from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from mcpsite.commands import user_named
from operator_api import services


class Command(BaseCommand):
    help = (
        "Create an operator API machine client (client_credentials) acting for a staff user; prints its "
        "client id and secret once (the secret is stored hashed)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--user", required=True, help="the operator: an active staff user")
        parser.add_argument("--scopes", required=True, help="space- or comma-separated operator scopes")
        parser.add_argument("--name", default="", help="the client's name (default: operator client of USER)")

    def handle(self, *args: Any, **options: Any) -> None:
        user = user_named(options["user"], staff=True)
        scopes = options["scopes"].replace(",", " ").split()
        try:
            application, secret = services.operator_client_create(user=user, scopes=scopes, name=options["name"])
        except services.OperatorClientRefused as refused:
            raise CommandError(str(refused)) from None
        self.stdout.write(f"# {application.name}: acts for {user.get_username()} with {' '.join(sorted(scopes))}")
        self.stdout.write("# the secret is shown only now")
        self.stdout.write(f"client_id={application.client_id}")
        self.stdout.write(f"client_secret={secret}")
