"""``MCPSITE_LOG_FORMAT=json`` reaches the Celery processes: Celery keeps our root handler
(``CELERY_WORKER_HIJACK_ROOT_LOGGER`` off) instead of its own plain one, so a worker with its beat
started as deploy/ starts it (``--quiet``: no banner) writes nothing but JSON lines, as deployed
(PostgreSQL, Redis); a Python warning (Celery's, about running as root) is one too. The beat's
own jobs are not among them at INFO: the audit drain, every second, would be two lines a second."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

from tests.conftest import ROOT, database_url
from tests.operate.conftest import json_lines


def test_a_worker_with_its_beat_writes_only_json_lines(tmp_path: Path, database_url_for_servers: str) -> None:
    env = {**os.environ, "MCPSITE_DATABASE_URL": database_url(), "MCPSITE_LOG_FORMAT": "json"}
    log = tmp_path / "celery.log"
    command = [
        str(ROOT / ".venv/bin/celery"), "-A", "config", "--quiet", "worker",
        "--beat", f"--schedule={tmp_path}/schedule", "-Q", "housekeeping", "--concurrency=1", "--loglevel=INFO",
    ]  # fmt: skip
    with log.open("wb") as out:
        worker = subprocess.Popen(
            command, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
    try:
        deadline = time.monotonic() + 60
        while " ready." not in log.read_text(errors="replace"):
            assert worker.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.2)
        time.sleep(2.5)  # the beat's every-second job (the audit drain) sent, received and run twice
        running = log.read_text()
    finally:
        os.killpg(worker.pid, signal.SIGTERM)
        worker.wait(timeout=30)
    lines = json_lines(running)  # a line that is not one JSON object fails here
    # On SIGTERM Celery prints one notice itself, not through logging: the only text line.
    text = [line for line in log.read_text().splitlines() if line.strip() and not line.startswith("{")]
    assert text == ["worker: Warm shutdown (MainProcess)"], text
    loggers = {line["logger"] for line in lines}
    assert {"celery.worker.consumer.connection", "celery.beat"} <= loggers, loggers
    assert any(line["message"].endswith(" ready.") for line in lines)
    # The beat's own jobs are bookkeeping, at DEBUG: not two INFO lines a second for the drain.
    drain = [line["message"] for line in lines if "toolcalls_drain" in line["message"]]
    assert drain == [], drain
