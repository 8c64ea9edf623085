from django.apps import AppConfig


class NotificationsConfig(AppConfig):
    name = "notifications"
    verbose_name = "Outgoing notifications"

    def ready(self) -> None:
        from notifications import receivers  # noqa: F401  (connects the receivers)
