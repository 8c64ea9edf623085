from django.apps import AppConfig


class McpsiteConfig(AppConfig):
    name = "mcpsite"
    verbose_name = "MCP site"

    def ready(self) -> None:
        from mcpsite import checks, signals  # noqa: F401  (registers the checks, connects the receivers)
