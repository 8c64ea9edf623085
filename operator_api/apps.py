from django.apps import AppConfig


class OperatorApiConfig(AppConfig):
    name = "operator_api"
    verbose_name = "Operator API"

    def ready(self) -> None:
        from operator_api import schema  # noqa: F401  (registers the OpenAPI extension for our authentication)
