"""`.ci/audit_dependencies.py` never lets an unaudited run pass for clean.

Each case runs the script against a stand-in pip-audit (a real executable printing a
report of the shape pip-audit 2.10 prints with `-f json`).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.server import ROOT

SCRIPT = ROOT / ".ci" / "audit_dependencies.py"
CLEAN = {"name": "pyyaml", "version": "6.0.3", "vulns": []}
SKIPPED = {"name": "boto3", "skip_reason": "Dependency not found on PyPI and could not be audited"}
VULNERABLE = {
    "name": "requests",
    "version": "2.0.0",
    "vulns": [{"id": "PYSEC-0000-1", "fix_versions": ["2.31.0"], "description": "x"}],
}


def run(tmp_path: Path, report: object, required: bool = False) -> subprocess.CompletedProcess[str]:
    fake = tmp_path / "pip-audit"
    payload = tmp_path / "report.json"
    payload.write_text(json.dumps(report) if not isinstance(report, str) else report)
    fake.write_text(f"#!{sys.executable}\nprint(open({str(payload)!r}).read())\n")
    fake.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k != "TAISCE_AUDIT_REQUIRED"}
    if required:
        env["TAISCE_AUDIT_REQUIRED"] = "1"
    return subprocess.run(
        [sys.executable, str(SCRIPT), str(fake)],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )


def test_all_audited_and_clean_passes(tmp_path: Path) -> None:
    done = run(tmp_path, {"dependencies": [CLEAN], "fixes": []})
    assert done.returncode == 0
    assert "no known vulnerabilities in 1 packages" in done.stdout


@pytest.mark.parametrize("required", [False, True])
def test_a_vulnerability_fails_and_is_named(tmp_path: Path, required: bool) -> None:
    done = run(tmp_path, {"dependencies": [CLEAN, VULNERABLE, SKIPPED]}, required)
    assert done.returncode == 1
    assert "VULNERABLE requests 2.0.0: PYSEC-0000-1 (fixed in 2.31.0)" in done.stdout


def test_unaudited_packages_are_said_plainly_and_fail_when_required(tmp_path: Path) -> None:
    report = {"dependencies": [CLEAN, SKIPPED]}
    lenient = run(tmp_path, report)
    assert lenient.returncode == 0
    assert "NOT AUDITED 1 of 2 packages" in lenient.stdout and "boto3" in lenient.stdout
    assert "no known vulnerabilities" not in lenient.stdout
    assert run(tmp_path, report, required=True).returncode == 1


def test_no_report_at_all_fails(tmp_path: Path) -> None:
    done = run(tmp_path, "not json")
    assert done.returncode == 2
    assert "FAILED to run" in done.stderr


def test_an_empty_report_fails(tmp_path: Path) -> None:
    done = run(tmp_path, {"dependencies": [], "fixes": []})
    assert done.returncode == 2
    assert "no package" in done.stderr
