"""The conformance suite's Tasks extension scenarios (SEP-2663) pass against the conformance tenant.

`tests/conformance/test_conformance_suite.py` runs them too (in ``--suite all``, no longer excused
by the baseline); this file runs each on its own, so a failure names its scenario and checks.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conformance.test_conformance_suite import NOT_PASSING, run_suite
from tests.conftest import LiveServer

SCENARIOS = [
    "tasks-lifecycle",
    "tasks-capability-negotiation",
    "tasks-wire-fields",
    "tasks-request-state-removal",
    "tasks-mrtr-input",
    "tasks-request-headers",
    "tasks-dispatch-and-envelope",
    "tasks-required-task-error",
    "tasks-mrtr-composition",
]


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_the_tasks_scenario_passes(conformance_url: str, live: LiveServer, scenario: str, tmp_path: Path) -> None:
    run = run_suite(conformance_url, tmp_path, "--scenario", scenario)

    checks = run.checks.get(scenario)
    assert checks, f"{scenario} did not run:\n{run.output}"
    failing = [f"{c['id']}: [{c['status']}] {c.get('errorMessage', '')}" for c in checks if c["status"] in NOT_PASSING]
    assert not failing, "\n".join(failing) + "\n--- server log ---\n" + live.log()[-6000:]
