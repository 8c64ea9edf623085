"""The deployment files, read as the tools that use them read them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from tests.conftest import ROOT

DEPLOY = ROOT / "deploy"
SECRETS = (
    "secret_key",
    "key_encryption_key",
    "sandbox_webhook_secret",
    "postgres_password",
    "database_url",
    "redis_url",
)
"""The files deploy/make-secrets writes."""
SECRET_SETTINGS = {
    "MCPSITE_SECRET_KEY": "secret_key",
    "MCPSITE_KEY_ENCRYPTION_KEY": "key_encryption_key",
    "MCPSITE_SANDBOX_WEBHOOK_SECRET": "sandbox_webhook_secret",
    "MCPSITE_DATABASE_URL": "database_url",
    "MCPSITE_REDIS_URL": "redis_url",
}
"""Every setting that is a secret (config/settings.py reads each with `env_secret`), and its file."""


def compose() -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load((DEPLOY / "compose.yaml").read_text())
    return loaded


def manifests() -> list[dict[str, Any]]:
    """Every Kubernetes object of deploy/kubernetes/, in the files' (apply) order."""
    return [
        document
        for path in sorted((DEPLOY / "kubernetes").glob("*.yaml"))
        for document in yaml.safe_load_all(path.read_text())
        if document
    ]


def manifest(kind: str, name: str) -> dict[str, Any]:
    [found] = [m for m in manifests() if m["kind"] == kind and m["metadata"]["name"] == name]
    return found


def pod_spec(workload: dict[str, Any]) -> dict[str, Any]:
    spec: dict[str, Any] = workload["spec"]["template"]["spec"]
    return spec


def workloads() -> list[dict[str, Any]]:
    return [m for m in manifests() if m["kind"] in ("Deployment", "Job")]


def read(path: Path) -> str:
    return path.read_text()
