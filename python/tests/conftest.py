"""Shared fixtures: the repository's committed captures and the Rust `oomlens` binary
the package's reports are checked against (OOMLENS_BIN, default target/release/oomlens).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import List

import pytest

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"


def captures() -> List[Path]:
    """Every committed capture file."""
    return sorted(FIXTURES.rglob("*.xplane.pb"))


@pytest.fixture(scope="session")
def cli_bin() -> str:
    """The Rust binary built from the same engine (`cargo build --release`)."""
    path = Path(os.environ.get("OOMLENS_BIN", ROOT / "target" / "release" / "oomlens"))
    if not path.is_file():
        pytest.fail(f"no oomlens binary at {path}: run `cargo build --release` or set OOMLENS_BIN")
    return str(path)


@pytest.fixture(scope="session")
def cli(cli_bin):
    """Runs the Rust binary; returns (status, stdout, stderr) as text."""

    def run(*args: str, stdin: str = None):
        done = subprocess.run(
            [cli_bin, *map(str, args)],
            input=stdin,
            capture_output=True,
            text=True,
            encoding="utf-8",
        )
        return done.returncode, done.stdout, done.stderr

    return run
