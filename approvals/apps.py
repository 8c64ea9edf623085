from django.apps import AppConfig


class ApprovalsConfig(AppConfig):
    name = "approvals"
    verbose_name = "Approvals and payments"

    def ready(self) -> None:
        # The framework's URL-mode steps are kept here as Elicitation rows; registering the store
        # (instead of the framework importing it) keeps `tools_app` below `approvals`.
        from approvals.step_store import ElicitationStepStore
        from tools_app.urlmode import url_step_store_register

        url_step_store_register(ElicitationStepStore())
