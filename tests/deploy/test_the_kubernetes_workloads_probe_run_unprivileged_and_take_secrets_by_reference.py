"""What the Kubernetes manifests must say beyond their schema: the web pods are routed on /readyz
and restarted on /healthz, the beat runs once, nothing runs as root or writes its image, every
container asks for resources, every secret comes from the Secret by reference, the migration is a
Job, and the web pods have a disruption budget."""

from __future__ import annotations

from typing import Any

from tests.deploy.conftest import SECRET_SETTINGS, manifest, manifests, pod_spec, workloads


def test_web_pods_take_traffic_on_readyz_and_restart_on_healthz() -> None:
    [web] = pod_spec(manifest("Deployment", "mcpsite-web"))["containers"]
    assert web["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert web["livenessProbe"]["httpGet"]["path"] == "/healthz"
    assert web["startupProbe"]["httpGet"]["path"] == "/healthz"
    port = {p["name"]: p["containerPort"] for p in web["ports"]}[web["readinessProbe"]["httpGet"]["port"]]
    assert web["args"][web["args"].index("--port") + 1] == str(port)
    assert manifest("Deployment", "mcpsite-web")["spec"]["replicas"] >= 2


def test_the_beat_is_one_replica_replaced_by_stopping_the_old_one_first() -> None:
    beat = manifest("Deployment", "mcpsite-beat")
    assert beat["spec"]["replicas"] == 1 and beat["spec"]["strategy"]["type"] == "Recreate"
    [container] = pod_spec(beat)["containers"]
    assert "--beat" in container["command"]
    others = [m for m in workloads() if m["metadata"]["name"] != "mcpsite-beat"]
    assert not any(
        "--beat" in c.get("command", []) or c.get("command", [])[-1:] == ["beat"]
        for m in others
        for c in pod_spec(m)["containers"]
    )


def test_no_pod_runs_as_root_or_can_gain_privileges_or_write_its_image() -> None:
    for workload in workloads():
        pod = pod_spec(workload)
        assert pod["securityContext"]["runAsNonRoot"] is True and pod["securityContext"]["runAsUser"] == 10001
        assert pod["automountServiceAccountToken"] is False
        for container in pod["containers"]:
            security = container["securityContext"]
            assert security["allowPrivilegeEscalation"] is False, workload["metadata"]["name"]
            assert security["readOnlyRootFilesystem"] is True
            assert security["capabilities"]["drop"] == ["ALL"]


def test_every_container_requests_cpu_and_memory_and_caps_its_memory() -> None:
    for workload in workloads():
        for container in pod_spec(workload)["containers"]:
            assert {"cpu", "memory"} <= set(container["resources"]["requests"]), workload["metadata"]["name"]
            assert "memory" in container["resources"]["limits"]


def env_of(container: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {entry["name"]: entry for entry in container.get("env", [])}


def test_every_secret_comes_from_the_secret_by_reference_and_none_is_written_in_a_manifest() -> None:
    config = manifest("ConfigMap", "mcpsite-config")["data"]
    assert not set(SECRET_SETTINGS) & set(config) and not any(k.endswith("_FILE") for k in config)
    assert not any(m["kind"] == "Secret" for m in manifests()), "a Secret's values belong to the cluster"
    for workload in workloads():
        [container] = pod_spec(workload)["containers"]
        env = env_of(container)
        for name, key in SECRET_SETTINGS.items():
            assert "value" not in env[name], (workload["metadata"]["name"], name)
            assert env[name]["valueFrom"]["secretKeyRef"] == {"name": "mcpsite-secrets", "key": key}
        assert container["envFrom"] == [{"configMapRef": {"name": "mcpsite-config"}}]


def test_the_migration_is_a_job_that_migrates_and_makes_the_first_key() -> None:
    job = manifest("Job", "mcpsite-migrate")
    [container] = pod_spec(job)["containers"]
    assert pod_spec(job)["restartPolicy"] == "Never"
    assert container["command"][-1] == "python manage.py migrate --noinput && python manage.py keyring_init"


def test_the_web_pods_have_a_disruption_budget_and_a_service() -> None:
    labels = manifest("Deployment", "mcpsite-web")["spec"]["template"]["metadata"]["labels"]
    budget = manifest("PodDisruptionBudget", "mcpsite-web")["spec"]
    assert budget["minAvailable"] >= 1 and budget["selector"]["matchLabels"] == labels
    service = manifest("Service", "mcpsite-web")["spec"]
    assert service["selector"] == labels and service["ports"][0]["targetPort"] == "http"
