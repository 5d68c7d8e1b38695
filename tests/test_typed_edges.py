"""Defects found while typing the edges (mypy and ruff findings that were real bugs)."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import tarfile

from conftest import run_giok

# Fails the run if the CLI calls click's deprecated (removed in Click 9) get_binary_stream.
NO_DEPRECATED_CLICK = {"PYTHONWARNINGS": "error:'get_binary_stream' is deprecated:DeprecationWarning"}


def test_export_to_stdout_writes_bytes_without_a_deprecated_click_call(ws):
    ws.remember("The NAS is at 192.168.1.20", layer="M90")
    jsonl = run_giok("-w", "zeon", "export", env=NO_DEPRECATED_CLICK)
    assert jsonl.returncode == 0, jsonl.stderr
    assert any(
        json.loads(line).get("text") == "The NAS is at 192.168.1.20" for line in jsonl.stdout.splitlines()
    )
    tar = subprocess.run(
        [sys.executable, "-m", "giok", "-w", "zeon", "export", "--format", "tar"],
        env={**os.environ, **NO_DEPRECATED_CLICK},
        capture_output=True,
        timeout=60,
    )
    assert tar.returncode == 0, tar.stderr
    with tarfile.open(fileobj=io.BytesIO(tar.stdout)) as archive:
        assert "zeon/MEMORY.md" in archive.getnames()
