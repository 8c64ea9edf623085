"""A module of ours never takes a standard library name (`tools_app/secrets.py` did): a newcomer
reading ``secrets`` expects the standard library's, and a relative or path-first import would get ours."""

from __future__ import annotations

import sys
from pathlib import Path

from tests.packages import OURS

ROOT = Path(__file__).resolve().parents[2]
APPS = (*OURS, "bench")


def test_no_module_of_ours_shadows_the_standard_library() -> None:
    shadowing = {
        str(path.relative_to(ROOT))
        for app in APPS
        for path in (ROOT / app).rglob("*.py")
        if ".venv" not in path.relative_to(ROOT).parts
        and any(part in sys.stdlib_module_names for part in path.relative_to(ROOT).with_suffix("").parts[1:])
    }
    assert shadowing == set()
