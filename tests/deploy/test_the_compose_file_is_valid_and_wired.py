"""deploy/compose.yaml validated offline against the Compose Specification's JSON schema (the copy
check-jsonschema vendors, pinned in requirements.lock), and wired as the README says: two web
processes behind nginx, which alone is trusted, a worker, one beat, PostgreSQL, Redis and a
one-off migration the others wait for; secrets only as files deploy/make-secrets writes."""

from __future__ import annotations

import copy
import re
from typing import Any

import jsonschema
import pytest
from check_jsonschema.builtin_schemas import get_builtin_schema

from tests.deploy.conftest import DEPLOY, SECRET_SETTINGS, SECRETS, compose

APP_SERVICES = ("migrate", "web1", "web2", "worker", "beat")


def validate(document: dict[str, Any]) -> None:
    schema = get_builtin_schema("vendor.compose-spec")
    jsonschema.validators.validator_for(schema)(schema).validate(document)


def test_the_compose_file_is_valid_against_the_compose_spec_schema() -> None:
    validate(compose())


def test_a_misspelt_key_is_refused_so_the_validation_above_means_something() -> None:
    broken = copy.deepcopy(compose())
    broken["services"]["web1"]["helthcheck"] = broken["services"]["web1"].pop("healthcheck")
    with pytest.raises(jsonschema.ValidationError):
        validate(broken)


def test_it_runs_two_web_processes_a_worker_one_beat_a_migration_postgres_redis_and_nginx() -> None:
    services = compose()["services"]
    assert set(services) == {*APP_SERVICES, "postgres", "redis", "nginx"}
    assert services["web1"]["healthcheck"]["test"][-1].endswith("'http://127.0.0.1:8000/readyz', timeout=3)")
    assert "--beat" in services["beat"]["entrypoint"] and "deploy" not in services["beat"]
    assert not any("--beat" in services[name].get("entrypoint", []) for name in APP_SERVICES if name != "beat")
    assert services["migrate"]["restart"] == "no"


def test_the_app_processes_start_after_the_migration_has_succeeded() -> None:
    services = compose()["services"]
    for name in ("web1", "web2", "worker", "beat"):
        assert services[name]["depends_on"]["migrate"] == {"condition": "service_completed_successfully"}, name
    assert services["nginx"]["depends_on"] == {n: {"condition": "service_healthy"} for n in ("web1", "web2")}


def test_nginx_is_the_one_trusted_proxy_and_sends_to_both_web_processes() -> None:
    document = compose()
    address = document["services"]["nginx"]["networks"]["backend"]["ipv4_address"]
    for name in APP_SERVICES:
        assert document["services"][name]["environment"]["MCPSITE_TRUSTED_PROXIES"] == address
    upstreams = re.findall(r"^\s*server (\S+):8000;", (DEPLOY / "nginx.conf").read_text(), re.M)
    assert upstreams == ["web1", "web2"]
    assert document["services"]["nginx"]["volumes"] == ["./nginx.conf:/etc/nginx/nginx.conf:ro"]


def test_every_secret_is_a_file_make_secrets_writes_and_none_is_an_environment_value() -> None:
    document = compose()
    assert {name: s["file"] for name, s in document["secrets"].items()} == {n: f"./secrets/{n}" for n in SECRETS}
    for name in APP_SERVICES:
        service = document["services"][name]
        environment = service["environment"]
        assert not set(SECRET_SETTINGS) & set(environment), name
        for setting, secret in SECRET_SETTINGS.items():
            assert environment[f"{setting}_FILE"] == f"/run/secrets/{secret}"
            assert secret in service["secrets"]
    postgres = document["services"]["postgres"]
    assert postgres["environment"]["POSTGRES_PASSWORD_FILE"] == "/run/secrets/postgres_password"


def test_the_app_containers_run_read_only_without_capabilities() -> None:
    services = compose()["services"]
    for name in APP_SERVICES:
        assert services[name]["read_only"] is True and services[name]["cap_drop"] == ["ALL"], name
        assert "no-new-privileges:true" in services[name]["security_opt"]
