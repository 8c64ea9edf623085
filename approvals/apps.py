from django.apps import AppConfig


class ApprovalsConfig(AppConfig):
    name = "approvals"
    verbose_name = "Approvals and payments"

    def ready(self) -> None:
        # The core's broadcast listener tells this app's waiters that a row ended; registered here
        # so the core never imports the app above it.
        from approvals import completion_wait, services
        from mcpsite import broadcast

        broadcast.register(services.RESOLVED_EVENT, completion_wait.on_resolved)
