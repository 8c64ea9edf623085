"""``manage.py check --deploy`` in a production environment (https site root behind a trusted
proxy, every secret set) reports nothing we could fix. What remains, and why:

- ``oauth2_provider.W006`` (tokens stored in plaintext): hashed storage changes how every stored
  token is looked up (our bearer check, the token cache, revocation broadcasts) and every issued
  token would have to be issued again; a change of its own.
- ``security.W005`` and ``security.W021`` (HSTS for every subdomain, the preload list) unless the
  operator says so (``MCPSITE_HSTS_INCLUDE_SUBDOMAINS``, ``MCPSITE_HSTS_PRELOAD``): only they know
  whether every subdomain of their domain is on https.

``oauth2_provider.W008`` (http redirect URIs) is acknowledged in the settings: native MCP clients
receive their code on a loopback http URI (RFC 8252), the only http registration allows.
"""

from __future__ import annotations

import re
import subprocess

from tests.operate.conftest import manage, production_env

REMAINING = {"oauth2_provider.W006"}


def reported(result: subprocess.CompletedProcess[str]) -> set[str]:
    return set(re.findall(r"\(([a-z_0-9]+\.[WE]\d{3})\)", result.stdout + result.stderr))


def test_check_deploy_reports_only_what_is_documented_as_remaining() -> None:
    env = production_env(MCPSITE_HSTS_INCLUDE_SUBDOMAINS="1", MCPSITE_HSTS_PRELOAD="1")
    result = manage("check", "--deploy", env=env)

    assert reported(result) == REMAINING, result.stdout + result.stderr


def test_hsts_for_subdomains_and_preloading_are_left_to_the_operator() -> None:
    result = manage("check", "--deploy", env=production_env())

    assert reported(result) == REMAINING | {"security.W005", "security.W021"}, result.stdout + result.stderr


def test_over_plain_http_only_djangos_https_advice_remains() -> None:
    """Served over http (a laptop, a private network), Django's https advice is all there is left."""
    env = production_env(MCPSITE_SITE_ROOT="http://10.0.0.5:8000", MCPSITE_TRUSTED_PROXIES="")
    result = manage("check", "--deploy", env=env)

    assert reported(result) == REMAINING | {"security.W004", "security.W008", "security.W012", "security.W016"}
