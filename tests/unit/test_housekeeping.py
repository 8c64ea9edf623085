"""What beat runs with nobody waiting: every scheduled task exists, and the clean-ups delete only
what is past its use."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.conf import settings
from django.utils import timezone
from django.utils.module_loading import import_string

from mcpsite import tasks
from mcpsite.models import ConsumedRequestState, ProcessHeartbeat

pytestmark = pytest.mark.django_db


def test_every_beat_entry_names_a_registered_task() -> None:
    from config.celery import app

    app.loader.import_default_modules()
    for name, entry in settings.CELERY_BEAT_SCHEDULE.items():
        assert entry["task"] in app.tasks, name
        assert import_string(str(entry["task"])).name == entry["task"]


def test_expired_request_state_claims_are_purged_and_live_ones_kept() -> None:
    now = timezone.now()
    ConsumedRequestState.objects.create(digest="old", expires_at=now - timedelta(seconds=1))
    ConsumedRequestState.objects.create(digest="live", expires_at=now + timedelta(minutes=5))
    assert tasks.request_states_purge() == 1
    assert list(ConsumedRequestState.objects.values_list("digest", flat=True)) == ["live"]


def test_processes_silent_for_a_day_are_forgotten() -> None:
    now = timezone.now()
    for process_id, seen in (("dead", now - timedelta(days=2)), ("alive", now)):
        ProcessHeartbeat.objects.create(
            process_id=process_id, hostname="h", pid=1, ring_version="v", started_at=seen, seen_at=seen
        )
    assert tasks.heartbeats_purge() == 1
    assert ProcessHeartbeat.objects.filter(process_id="dead").count() == 0
    assert ProcessHeartbeat.objects.filter(process_id="alive").count() == 1


def test_expired_metadata_document_clients_holding_nothing_live_are_cleared() -> None:
    """Anyone can make a client row by naming a Client ID Metadata Document; the hourly clean-up
    deletes those that expired and hold nothing live, and keeps one still in use."""
    from django.contrib.auth import get_user_model
    from oauth2_provider.models import AccessToken, Application

    now = timezone.now()
    user = get_user_model().objects.create_user("cimd-holder")

    def cimd(url: str) -> Application:
        return Application.objects.create(
            client_id=url,
            client_type=Application.CLIENT_PUBLIC,
            authorization_grant_type=Application.GRANT_AUTHORIZATION_CODE,
            redirect_uris="http://127.0.0.1/cb",
            registration_source=Application.RegistrationSource.CIMD,
            cimd_expires_at=now - timedelta(hours=1),
        )

    cimd("https://gone.example/client.json")
    in_use = cimd("https://in-use.example/client.json")
    AccessToken.objects.create(user=user, application=in_use, token="live-cimd", expires=now + timedelta(hours=1))
    tasks.tokens_clear_expired()
    assert sorted(Application.objects.filter(registration_source="cimd").values_list("client_id", flat=True)) == [
        "https://in-use.example/client.json"
    ]


def dcr_client(name: str, *, registered_days_ago: int, source: str = "dcr") -> Any:
    from oauth2_provider.models import Application

    application = Application.objects.create(
        name=name,
        client_type=Application.CLIENT_PUBLIC,
        authorization_grant_type=Application.GRANT_AUTHORIZATION_CODE,
        redirect_uris="http://127.0.0.1/cb",
        registration_source=source,
    )
    # `created` is auto_now_add: backdated as a month-old registration would be
    Application.objects.filter(pk=application.pk).update(created=timezone.now() - timedelta(days=registered_days_ago))
    return application


def test_unused_dynamically_registered_clients_are_purged_and_the_others_kept() -> None:
    """DCR is open, so registrations nobody uses pile up; the hourly clean-up deletes one registered
    over 30 days ago with nothing live and no recent use, and keeps one holding a live token, one
    used recently (a token since expired), one just registered and one staff created."""
    from django.contrib.auth import get_user_model
    from oauth2_provider.models import AccessToken, Application, RefreshToken

    now = timezone.now()
    user = get_user_model().objects.create_user("dcr-holder")
    dcr_client("abandoned", registered_days_ago=40)
    dead_refresh = dcr_client("refresh long revoked", registered_days_ago=40)
    live_token = dcr_client("live token", registered_days_ago=40)
    recent_use = dcr_client("used last week", registered_days_ago=40)
    dcr_client("just registered", registered_days_ago=1)
    dcr_client("staff created", registered_days_ago=400, source="manual")
    AccessToken.objects.create(user=user, application=live_token, token="live", expires=now + timedelta(hours=1))
    used = AccessToken.objects.create(user=user, application=recent_use, token="old", expires=now - timedelta(days=6))
    AccessToken.objects.filter(pk=used.pk).update(created=now - timedelta(days=7))
    revoked = RefreshToken.objects.create(user=user, application=dead_refresh, token="r", revoked=now)
    RefreshToken.objects.filter(pk=revoked.pk).update(
        created=now - timedelta(days=35), revoked=now - timedelta(days=34)
    )

    assert tasks.dcr_clients_purge() == 2

    assert sorted(Application.objects.values_list("name", flat=True)) == [
        "just registered",
        "live token",
        "staff created",
        "used last week",
    ]


def test_one_run_of_the_client_clean_up_is_bounded(settings: Any) -> None:
    from oauth2_provider.models import Application

    settings.MCPSITE = {**settings.MCPSITE, "DCR_PURGE_BATCH_SIZE": 2, "DCR_PURGE_BATCHES_PER_RUN": 2}
    for n in range(5):
        dcr_client(f"abandoned {n}", registered_days_ago=40)

    assert tasks.dcr_clients_purge() == 4
    assert Application.objects.filter(registration_source="dcr").count() == 1
    assert tasks.dcr_clients_purge() == 1
