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

        # The framework's URL-mode steps are kept here as Elicitation rows; registering the store
        # (instead of the framework importing it) keeps `tools_app` below `approvals`.
        from approvals.step_store import ElicitationStepStore
        from tools_app.urlmode import url_step_store_register

        url_step_store_register(ElicitationStepStore())
