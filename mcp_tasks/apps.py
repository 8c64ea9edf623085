from django.apps import AppConfig


class McpTasksConfig(AppConfig):
    name = "mcp_tasks"
    verbose_name = "Tasks"

    def ready(self) -> None:
        from mcp_tasks import receivers  # noqa: F401  (URL-mode steps that end resume their task)
