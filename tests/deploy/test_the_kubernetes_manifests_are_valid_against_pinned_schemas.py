"""deploy/kubernetes/ validated offline against the Kubernetes schemas kubernetes-validate ships
(pinned in requirements.lock), strictly: an unknown field is an error, as the API server's
strict field validation makes it."""

from __future__ import annotations

import copy

import kubernetes_validate
import pytest

from tests.deploy.conftest import manifest, manifests

VERSION = "1.37.0"  # the newest schema kubernetes-validate 1.37 ships; the manifests use only GA APIs


@pytest.mark.parametrize("document", manifests(), ids=lambda m: f"{m['kind']}/{m['metadata']['name']}")
def test_every_manifest_is_valid_for_the_pinned_kubernetes_version(document: dict[str, object]) -> None:
    kubernetes_validate.validate(document, VERSION, strict=True)


def test_the_manifests_hold_every_object_the_deployment_needs() -> None:
    kinds = sorted(f"{m['kind']}/{m['metadata']['name']}" for m in manifests())
    assert kinds == [
        "ConfigMap/mcpsite-config",
        "Deployment/mcpsite-beat",
        "Deployment/mcpsite-web",
        "Deployment/mcpsite-worker",
        "Job/mcpsite-migrate",
        "PodDisruptionBudget/mcpsite-web",
        "PodDisruptionBudget/mcpsite-worker",
        "Service/mcpsite-web",
    ]


def test_a_misspelt_field_is_refused_so_the_validation_above_means_something() -> None:
    web = copy.deepcopy(manifest("Deployment", "mcpsite-web"))
    web["spec"]["template"]["spec"]["containers"][0]["readinesProbe"] = web["spec"]["template"]["spec"]["containers"][
        0
    ].pop("readinessProbe")
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(web, VERSION, strict=True)
