"""deploy/Containerfile. This machine cannot build it (no container registry is reachable, so the
base image cannot be pulled; README, "Deploy"): what can be checked without building is checked
here, on its instructions."""

from __future__ import annotations

import re

from tests.conftest import ROOT
from tests.deploy.conftest import DEPLOY, compose, manifest, pod_spec
from tests.packages import OURS


def instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) in order, continuation lines joined, comments dropped."""
    text = re.sub(r"\\\n", " ", (DEPLOY / "Containerfile").read_text())
    lines = [line.strip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    return [(word.upper(), rest.strip()) for word, _, rest in (line.partition(" ") for line in lines)]


def test_it_starts_from_debian_slim_python_of_the_version_the_project_requires() -> None:
    [base] = [args for word, args in instructions() if word == "FROM"]
    assert re.fullmatch(r"docker\.io/library/python:3\.11-slim-bookworm", base)
    assert 'requires-python = ">=3.11"' in (ROOT / "pyproject.toml").read_text()


def test_it_installs_the_locked_dependencies_hash_checked() -> None:
    runs = [args for word, args in instructions() if word == "RUN"]
    assert any("pip install --require-hashes --no-deps -r /app/requirements.lock" in run for run in runs)
    assert ("COPY", "requirements.lock /app/requirements.lock") in instructions()


def test_it_copies_every_package_of_ours() -> None:
    copied = [args.split()[0] for word, args in instructions() if word == "COPY"]
    assert [name for name in copied if name in OURS] == list(OURS)
    assert {"manage.py", "templates"} <= set(copied)


def test_it_runs_as_the_unprivileged_user_the_manifests_name() -> None:
    [user] = [args for word, args in instructions() if word == "USER"]
    assert user == "10001:10001"
    web = pod_spec(manifest("Deployment", "mcpsite-web"))["securityContext"]
    assert (web["runAsUser"], web["runAsGroup"]) == (10001, 10001)


def test_its_entrypoint_is_the_launcher_and_compose_and_kubernetes_serve_through_it() -> None:
    found = dict(instructions())
    assert found["ENTRYPOINT"] == '["python", "-m", "mcp_server.serve"]'
    assert found["CMD"] == '["--host", "0.0.0.0", "--port", "8000"]'
    assert "entrypoint" not in compose()["services"]["web1"]
    assert "command" not in pod_spec(manifest("Deployment", "mcpsite-web"))["containers"][0]


def test_the_build_context_leaves_out_the_secrets_and_the_local_environment() -> None:
    ignored = (ROOT / ".dockerignore").read_text().split()
    assert {"deploy/secrets", ".venv", ".git", "var"} <= set(ignored)
