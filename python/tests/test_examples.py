"""The fleet example (python/examples/analyze_hosts.py, docs/python.md) on a run folder
of several hosts: one JSON line per host, each the CLI's report on that file."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

from conftest import FIXTURES, ROOT

EXAMPLE = ROOT / "python" / "examples" / "analyze_hosts.py"


def test_one_json_line_per_host(tmp_path, cli):
    run = tmp_path / "plugins" / "profile" / "2026_01_01_00_00_00"
    run.mkdir(parents=True)
    sources = ["oom_first_call", "leak_steps", "scan_layers"]
    for i, name in enumerate(sources):
        shutil.copyfile(FIXTURES / name / f"{name}.xplane.pb", run / f"host{i}.xplane.pb")
    (run / "host9.xplane.pb").write_bytes(b"\x00broken")
    done = subprocess.run([sys.executable, str(EXAMPLE), str(run)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == 4
    for i, line in enumerate(lines[:3]):
        status, out, _ = cli(run / f"host{i}.xplane.pb", "--format", "json")
        assert status == 0 and json.loads(line) == json.loads(out)
    broken = json.loads(lines[3])
    assert broken["file"] == "host9.xplane.pb" and broken["error"]["kind"] in ("not_a_capture", "corrupt", "truncated")
