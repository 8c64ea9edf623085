"""mcpsite's own settings live in their group (``settings.MCPSITE``), not beside Django's."""

from __future__ import annotations

from django.conf import settings


def test_no_mcpsite_setting_stands_outside_its_group() -> None:
    assert [name for name in dir(settings) if name.startswith("MCPSITE_")] == []
    assert settings.MCPSITE["DCR_PER_HOUR"] == 30
    assert settings.MCPSITE["OAUTH_CIMD_FETCHER"] == "oauth2_provider.cimd.SafeMetadataFetcher"
