"""The Django project: settings, URLs and the Celery app, which the apps and the server run in.

The Celery app is made when the project is (Django loads ``config.settings`` through this
package), so the apps' ``shared_task`` and ``celery.current_app`` are this configured one."""

from config.celery import app as celery_app

__all__ = ["celery_app"]
