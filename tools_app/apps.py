from django.apps import AppConfig


class ToolsAppConfig(AppConfig):
    name = "tools_app"
    verbose_name = "Tools"

    def ready(self) -> None:
        from tools_app import sdk
        from tools_app.discovery import autodiscover
        from tools_app.toolsets import is_rendered_once

        sdk.memoize_form_questions(fixed=is_rendered_once)
        autodiscover()
