"""The package's `oomlens` command is the Rust CLI; the HTML report is one
self-contained file whose strings from the capture cannot become markup."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

import oomlens

from conftest import FIXTURES

SCRIPT = Path(sys.executable).with_name("oomlens")
OOM_FIRST_CALL = FIXTURES / "oom_first_call"


def script(*args):
    done = subprocess.run([str(SCRIPT), *map(str, args)], capture_output=True, text=True)
    return done.returncode, done.stdout, done.stderr


@pytest.mark.parametrize(
    "args",
    [
        ("--version",),
        (OOM_FIRST_CALL, "--format", "json"),
        (OOM_FIRST_CALL, "--format", "html", "--error-text", OOM_FIRST_CALL / "error.txt"),
        (FIXTURES / "scan_layers",),
        ("diff", FIXTURES / "pairs/leak/before", FIXTURES / "pairs/leak/after", "--format", "json"),
        (FIXTURES / "nowhere",),
        (OOM_FIRST_CALL, "--module", "nope"),
        (OOM_FIRST_CALL, "--format", "yaml"),
    ],
    ids=["version", "json", "html", "text", "diff", "missing", "module", "usage"],
)
def test_the_console_script_is_the_rust_cli(args, cli):
    assert SCRIPT.is_file(), f"the wheel installs no oomlens script beside {sys.executable}"
    status, out, err = script(*args)
    assert (status, out, err) == cli(*args)
    if status != 0:
        assert status == 2 and out == "" and err.startswith(("oomlens: ", "error: "))


def test_python_dash_m_oomlens(cli):
    done = subprocess.run(
        [sys.executable, "-m", "oomlens", OOM_FIRST_CALL, "--format", "json"],
        capture_output=True,
        text=True,
    )
    assert (done.returncode, done.stdout) == cli(OOM_FIRST_CALL, "--format", "json")[:2]


def test_html_is_self_contained():
    report = oomlens.analyze(FIXTURES / "attention_train")
    page = report.html()
    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")
    assert "Content-Security-Policy" in page and "default-src 'none'" in page
    assert "<script" not in page.lower()
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:|//)""", page, re.I)
    assert "@import" not in page and "url(" not in page
    assert "<svg" in page  # the memory chart, inline
    assert report["headline"]["text"].split(":")[0] in page
    fragment = report._repr_html_()
    assert fragment.startswith("<div class=\"oomlens-report\">")
    assert "<html" not in fragment and "<script" not in fragment.lower()


HOSTILE_MODULE = b"<svg/onload=1"  # as long as "jit_rank_eval", so the protobuf stays valid
HOSTILE_FILE = "<img src=x onerror=alert('x')>\"&.xplane.pb"


def test_hostile_strings_from_the_capture_are_escaped():
    data = (OOM_FIRST_CALL / "oom_first_call.xplane.pb").read_bytes()
    assert len(HOSTILE_MODULE) == len(b"jit_rank_eval") and b"jit_rank_eval" in data
    data = data.replace(b"jit_rank_eval", HOSTILE_MODULE)
    error = (OOM_FIRST_CALL / "error.txt").read_text().replace("jit_rank_eval", "<svg/onload=1")
    report = oomlens.analyze(data, name=HOSTILE_FILE, error_text=error)
    assert report["selected_module"].startswith("<svg/onload=1(")  # the engine read it
    assert report["file"] == HOSTILE_FILE
    for page in (report.html(), report._repr_html_()):
        assert "<svg/onload" not in page and "&lt;svg/onload=1" in page
        assert "<img" not in page and "&lt;img src=x onerror=alert(&#39;x&#39;)&gt;&quot;&amp;" in page
        assert "<script" not in page.lower()
