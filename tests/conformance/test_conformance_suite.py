"""The official MCP conformance suite passes against a tenant of the live server, at both
protocol generations.

`scripts/conformance-install` (run by `scripts/test`) puts the pinned suite and its Node under
`.cache/conformance/`; each test runs it as a subprocess against the public `conformance` tenant
(toolset `demo/tools/conformance/`) and reads the per-scenario `checks.json` it writes.
"""

from __future__ import annotations

import json
import re
import subprocess
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
import yaml
from django.core.management import call_command

from mcpsite.models import Tenant
from tests.conftest import ROOT, LiveServer
from tests.operate.scrape import moved, scrape

INSTALL = ROOT / ".cache" / "conformance"
RUNNER = INSTALL / "bin" / "conformance"
PACKAGE = INSTALL / "suite" / "node_modules" / "@modelcontextprotocol" / "conformance"
BASELINE = Path(__file__).with_name("expected-failures.yaml")
REVISIONS = ["2026-07-28", "2025-11-25"]
NOT_PASSING = {"FAILURE", "WARNING"}  # what the suite itself counts against a baseline

# --output-dir holds one `server-<scenario>-<timestamp>/checks.json` per scenario run.
_RESULT_DIR = re.compile(r"^server-(?P<scenario>.+)-\d{4}-\d{2}-\d{2}T[\d-]+Z$")


@dataclass(frozen=True)
class SuiteRun:
    exit_code: int
    output: str
    checks: dict[str, list[dict[str, Any]]]  # scenario -> its checks

    @property
    def failing(self) -> set[str]:
        return {name for name, checks in self.checks.items() if any(c["status"] in NOT_PASSING for c in checks)}

    @property
    def passing(self) -> set[str]:
        return set(self.checks) - self.failing

    def counts(self, label: str) -> str:
        statuses = Counter(c["status"] for checks in self.checks.values() for c in checks)
        return (
            f"conformance {label}: {len(self.passing)}/{len(self.checks)} scenarios passed "
            f"({len(self.failing)} failing); checks: {dict(sorted(statuses.items()))}"
        )


def run_suite(url: str, output_dir: Path, *args: str) -> SuiteRun:
    assert RUNNER.exists(), f"{RUNNER} is missing: run scripts/conformance-install (scripts/test does)"
    result = subprocess.run(
        [str(RUNNER), "server", "--url", url, "--expected-failures", str(BASELINE), "-o", str(output_dir), *args],
        capture_output=True,
        text=True,
        timeout=300,
    )
    checks: dict[str, list[dict[str, Any]]] = {}
    for path in output_dir.glob("*/checks.json"):
        match = _RESULT_DIR.match(path.parent.name)
        assert match, f"unexpected result directory {path.parent.name}"
        checks[match["scenario"]] = json.loads(path.read_text())
    return SuiteRun(exit_code=result.returncode, output=result.stdout + result.stderr, checks=checks)


def requirement_set(revision: str) -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load((PACKAGE / "requirements" / f"{revision}.yaml").read_text())
    return data


def scored(revision: str) -> set[str]:
    return set(requirement_set(revision)["server"])


def pending() -> set[str]:
    return {
        entry["scenario"]
        for revision in REVISIONS
        for entry in requirement_set(revision).get("not_scored", [])
        if entry["leg"] == "server" and entry["reason"] == "pending"
    }


def baseline() -> set[str]:
    return set(yaml.safe_load(BASELINE.read_text())["server"])


def describe(run: SuiteRun, scenarios: set[str]) -> str:
    lines = [
        f"  {name}: [{c['status']}] {c['id']}: {c.get('errorMessage', '')}"
        for name in sorted(scenarios)
        for c in run.checks.get(name, [])
        if c["status"] in NOT_PASSING
    ]
    return "\n".join(lines) + f"\n--- suite output (exit {run.exit_code}) ---\n{run.output}"


@pytest.mark.parametrize("revision", REVISIONS)
def test_every_scored_scenario_passes(
    live: LiveServer, conformance_url: str, revision: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = scrape(live.url)
    run = run_suite(conformance_url, tmp_path, "--requirements", revision)
    after = scrape(live.url)
    required = scored(revision)
    # The compiled tool calls' share (`mcp_server.compiled_calls`): what took the path of our own.
    calls = sum(
        moved(before, after, name, **dict(labels)) for name, labels in after if name == "mcpsite_tool_calls_total"
    )
    compiled = moved(before, after, "mcpsite_compiled_tool_calls_total")
    with capsys.disabled():
        print(f"\n{run.counts(f'--requirements {revision}')}; scored: {len(required & run.passing)}/{len(required)}")
        print(f"tools/call at {revision}: {calls:.0f}, answered by the compiled path: {compiled:.0f}")
    if revision == "2025-11-25":
        assert compiled == 0, "a 2025-11-25 call took the compiled path"
    else:
        assert compiled > 0, "no conformance call took the compiled path"

    assert required <= run.checks.keys(), f"scored scenarios that did not run: {sorted(required - run.checks.keys())}"
    assert not required & run.failing, describe(run, required & run.failing)
    assert run.exit_code == 0, describe(run, run.failing)


def test_every_2026_scenario_scores_alike_without_the_compiled_calls(
    live: LiveServer,
    conformance_url: str,
    server_factory: Callable[..., LiveServer],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Each 2026-07-28 scenario's checks come out the same from a server answering through the SDK's
    handler only (``MCPSITE_COMPILED_CALLS=0``) as from the suite's (the compiled tool calls on,
    `mcp_server.compiled_calls`): the differential test's conformance half (its corpus half is
    `tests/mcp/test_compiled_calls_answer_as_the_sdk_does.py`)."""
    sdk_only = server_factory(MCPSITE_COMPILED_CALLS="0")
    try:
        compiled = run_suite(conformance_url, tmp_path / "compiled", "--requirements", "2026-07-28")
        handled = run_suite(sdk_only.mcp_url("conformance"), tmp_path / "sdk", "--requirements", "2026-07-28")
    finally:
        sdk_only.stop()

    def outcomes(run: SuiteRun) -> dict[str, list[tuple[str, str]]]:
        return {name: sorted((c["id"], c["status"]) for c in checks) for name, checks in run.checks.items()}

    with capsys.disabled():
        print(f"\n{compiled.counts('compiled calls on')}\n{handled.counts('compiled calls off')}")
    assert compiled.checks and outcomes(compiled) == outcomes(handled)


def test_whole_suite_fails_only_where_pending_or_the_baseline_says(
    conformance_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--suite all` also runs pending and extension scenarios: report them, fail only on surprises."""
    run = run_suite(conformance_url, tmp_path, "--suite", "all")
    expected, tolerated = baseline(), pending()
    with capsys.disabled():
        print(f"\n{run.counts('--suite all')}; failing: {', '.join(sorted(run.failing)) or 'none'}")

    everything_scored = set().union(*(scored(revision) for revision in REVISIONS))
    assert everything_scored <= run.checks.keys(), f"did not run: {sorted(everything_scored - run.checks.keys())}"
    unexpected = run.failing - expected - tolerated
    assert not unexpected, "failing, neither pending nor in the baseline:\n" + describe(run, unexpected)
    stale = expected & run.passing
    assert not stale, f"passing now; remove from {BASELINE.name}: {sorted(stale)}"


def test_the_baseline_excuses_no_scored_scenario() -> None:
    scored_anywhere = set().union(*(scored(revision) for revision in REVISIONS))
    assert not baseline() & scored_anywhere, f"{BASELINE.name} lists scored scenarios: fix them instead"


@pytest.mark.django_db
def test_seed_demo_creates_the_public_conformance_tenant() -> None:
    out = StringIO()
    call_command("seed_demo", stdout=out)

    tenant = Tenant.objects.get(slug="conformance")
    assert tenant.public and tenant.enabled
    assert tenant.toolsets == ["conformance"]
    assert "/t/conformance/mcp" in out.getvalue()
