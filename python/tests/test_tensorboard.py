"""The OOM tab of TensorBoard (oomlens.tensorboard): its routes on a log directory of real
captures, the path-traversal guard of the capture route, streaming, the page's files
in the wheel, and a real `tensorboard --logdir` that finds the plugin by its entry point
and serves the tab, the page (with its Content-Security-Policy) and the capture bytes.

Without tensorboard installed the tests that need it skip, saying why, except under CI
(CI=true), where they fail: scripts/python-test.sh installs it.
"""

from __future__ import annotations

import http.client
import importlib.metadata
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
import tracemalloc
from pathlib import Path

import pytest

from conftest import FIXTURES, ROOT
from oomlens.tensorboard import _captures, _wsgi

CAPTURE = FIXTURES / "attention_train" / "attention_train.xplane.pb"
OTHER = FIXTURES / "oom_after_steps" / "oom_after_steps.xplane.pb"
SHARED = ROOT.parent / "shared" / "captures"
CI = os.environ.get("CI") == "true"
RUN = "2024_05_01_12_00_00"
OLDER = "2024_04_30_08_00_00"


def need_tensorboard():
    try:
        import tensorboard  # noqa: F401
    except ImportError as e:
        why = f"tensorboard is not installed in {sys.prefix} ({e}): pip install 'oomlens[tensorboard]' (scripts/python-test.sh does)"
        if CI:
            pytest.fail(f"CI=true and {why}: the OOM tab's tests must run in CI")
        pytest.skip(why)


@pytest.fixture()
def logdir(tmp_path):
    """A log directory as jax.profiler.trace writes it, plus a run one folder down
    (`tensorboard --logdir` over several jobs), a file that is no capture, an empty run,
    and a secret beside the log directory that no route may serve."""
    root = tmp_path / "logs"
    run = root / "plugins" / "profile" / RUN
    run.mkdir(parents=True)
    shutil.copy(CAPTURE, run / "host0.xplane.pb")
    shutil.copy(OTHER, run / "host1.xplane.pb")
    (run / "notes.txt").write_text("NOTES-CONTENT")
    older = root / "plugins" / "profile" / OLDER
    older.mkdir()
    shutil.copy(OTHER, older / "host0.xplane.pb")
    (root / "plugins" / "profile" / "empty_run").mkdir()
    nested = root / "train" / "plugins" / "profile" / RUN
    nested.mkdir(parents=True)
    shutil.copy(CAPTURE, nested / "worker-0.xplane.pb")
    (tmp_path / "secret.xplane.pb").write_bytes(b"SECRET outside the log directory")
    return root


def call(app, path, method="GET", environ=None):
    """One request to a WSGI app: (status code, headers, body iterable)."""
    got = {}

    def start_response(status, headers, exc_info=None):
        got["status"] = int(status.split()[0])
        got["headers"] = dict(headers)

    env = {"REQUEST_METHOD": method, "PATH_INFO": path.encode("utf-8").decode("latin-1"), "SCRIPT_NAME": "", "QUERY_STRING": ""}
    env.update(environ or {})
    body = app(env, start_response)
    return got["status"], got["headers"], body


def read(body) -> bytes:
    try:
        return b"".join(body)
    finally:
        if hasattr(body, "close"):
            body.close()


# ---------------------------------------------------------------- the runs

def test_runs_lists_every_run_folder_and_its_host_files(logdir):
    runs = _captures.list_runs(str(logdir))
    assert [r["run"] for r in runs] == [RUN, OLDER, f"train/{RUN}"]
    assert [h["host"] for h in runs[0]["hosts"]] == ["host0", "host1"]
    assert runs[0]["hosts"][0]["bytes"] == CAPTURE.stat().st_size
    assert [h["file"] for h in runs[2]["hosts"]] == ["worker-0.xplane.pb"]

    status, headers, body = call(_wsgi.OomlensApp(str(logdir)), "/data/plugin/oomlens/runs")
    assert status == 200 and headers["Content-Type"] == "application/json"
    listing = json.loads(read(body))
    assert listing["logdir"] == str(logdir) and listing["local"] is True
    assert [(r["run"], [h["url"] for h in r["hosts"]]) for r in listing["runs"]] == [
        (RUN, [f"capture/{RUN}/host0.xplane.pb", f"capture/{RUN}/host1.xplane.pb"]),
        (OLDER, [f"capture/{OLDER}/host0.xplane.pb"]),
        (f"train/{RUN}", [f"capture/train/{RUN}/worker-0.xplane.pb"]),
    ]


def test_no_log_directory_or_a_remote_one_lists_nothing(tmp_path):
    assert _captures.list_runs(None) == []
    assert _captures.list_runs(str(tmp_path / "absent")) == []
    listing = json.loads(read(call(_wsgi.OomlensApp("gs://bucket/logs"), "/data/plugin/oomlens/runs")[2]))
    assert listing == {"logdir": "gs://bucket/logs", "local": False, "page": listing["page"], "runs": []}


# ---------------------------------------------------------------- the capture route

@pytest.mark.parametrize("run,host,source", [(RUN, "host0", CAPTURE), (RUN, "host1", OTHER), (f"train/{RUN}", "worker-0", CAPTURE)])
def test_capture_route_serves_the_host_file_bytes(logdir, run, host, source):
    app = _wsgi.OomlensApp(str(logdir))
    status, headers, body = call(app, f"/data/plugin/oomlens/{_wsgi.capture_url(run, host + '.xplane.pb')}")
    assert status == 200, read(body)
    assert headers["Content-Type"] == "application/octet-stream"
    assert headers["X-Content-Type-Options"] == "nosniff"
    assert int(headers["Content-Length"]) == source.stat().st_size
    assert read(body) == source.read_bytes()
    # HEAD: the headers alone.
    status, headers, body = call(app, f"/data/plugin/oomlens/{_wsgi.capture_url(run, host + '.xplane.pb')}", method="HEAD")
    assert status == 200 and int(headers["Content-Length"]) == source.stat().st_size and read(body) == b""


def test_the_served_bytes_give_the_cli_report(logdir, cli):
    import oomlens

    body = read(call(_wsgi.OomlensApp(str(logdir)), f"/data/plugin/oomlens/capture/{RUN}/host0.xplane.pb")[2])
    code, out, err = cli(logdir / "plugins" / "profile" / RUN / "host0.xplane.pb", "--format", "json")
    assert code == 0, err
    assert dict(oomlens.analyze(body, name="host0.xplane.pb")) == json.loads(out)


TRAVERSALS = [
    # (route after capture/, expected status)
    (f"{RUN}/../../../../secret.xplane.pb", 400),
    ("../../secret.xplane.pb", 400),
    (f"{RUN}/..%2f..%2f..%2fsecret.xplane.pb", 404),
    ("..%2F..%2F..%2F..%2Fsecret.xplane.pb", 400),
    ("/etc/passwd", 400),
    ("//etc/x.xplane.pb", 400),
    (f"{RUN}/notes.txt", 400),
    (f"{RUN}/host0.xplane", 400),
    (f"{RUN}/.xplane.pb", 400),
    (f"{RUN}\\..\\..\\secret.xplane.pb", 400),
    (f"{RUN}/host0.xplane.pb\0.txt", 400),
    (f"./{RUN}/host0.xplane.pb", 400),
    (f"{RUN}//host0.xplane.pb", 400),
    ("a/b/c/d/e/f/host0.xplane.pb", 400),
    ("host0.xplane.pb", 400),
    ("nope/host0.xplane.pb", 404),
    (f"{RUN}/host9.xplane.pb", 404),
    ("empty_run/host0.xplane.pb", 404),
    (f"train/{RUN}/host0.xplane.pb", 404),
    (f"plugins/profile/{RUN}/host0.xplane.pb", 404),
]


@pytest.mark.parametrize("route,expected", TRAVERSALS)
def test_capture_route_serves_nothing_else(logdir, route, expected):
    status, headers, body = call(_wsgi.OomlensApp(str(logdir)), f"/data/plugin/oomlens/capture/{route}")
    text = read(body).decode("utf-8")
    assert status == expected, (status, text)
    assert headers["Content-Type"].startswith("text/plain")
    assert "SECRET" not in text
    # One clear line.
    assert text.startswith("oomlens: ") and text.count("\n") == 1, text


def test_bad_run_and_host_errors_say_what_exists(logdir):
    app = _wsgi.OomlensApp(str(logdir))
    text = read(call(app, "/data/plugin/oomlens/capture/nope/host0.xplane.pb")[2]).decode()
    assert text == f"oomlens: no run 'nope' under {logdir}/plugins/profile (runs: {RUN}, {OLDER}, train/{RUN})\n"
    text = read(call(app, f"/data/plugin/oomlens/capture/{RUN}/host9.xplane.pb")[2]).decode()
    assert text == f"oomlens: run '{RUN}' has no host file 'host9.xplane.pb' (hosts: host0, host1)\n"
    text = read(call(app, f"/data/plugin/oomlens/capture/{RUN}/../x.xplane.pb")[2]).decode()
    assert text.startswith(f"oomlens: '{RUN}/..' is not a run name")


def test_symbolic_links_out_of_plugins_profile_are_not_served(logdir, tmp_path):
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    shutil.copy(CAPTURE, outside / "hostX.xplane.pb")
    run = logdir / "plugins" / "profile" / RUN
    os.symlink(tmp_path / "secret.xplane.pb", run / "leak.xplane.pb")
    os.symlink(outside, logdir / "plugins" / "profile" / "linked_run")
    # A link inside plugins/profile to another host file there is fine.
    os.symlink(run / "host0.xplane.pb", run / "alias.xplane.pb")
    app = _wsgi.OomlensApp(str(logdir))
    for route in (f"{RUN}/leak.xplane.pb", "linked_run/hostX.xplane.pb"):
        status, _, body = call(app, f"/data/plugin/oomlens/capture/{route}")
        text = read(body).decode()
        assert status == 403 and "SECRET" not in text and "outside" in text, (route, status, text)
    listed = {(r["run"], h["host"]) for r in _captures.list_runs(str(logdir)) for h in r["hosts"]}
    assert (RUN, "leak") not in listed and ("linked_run", "hostX") not in listed
    assert (RUN, "alias") in listed
    status, _, body = call(app, f"/data/plugin/oomlens/capture/{RUN}/alias.xplane.pb")
    assert status == 200 and read(body) == CAPTURE.read_bytes()


def test_a_large_capture_is_streamed_in_slices(logdir):
    big = logdir / "plugins" / "profile" / RUN / "big.xplane.pb"
    size = 96 << 20
    with open(big, "wb") as f:
        f.truncate(size)  # sparse: no disk used
    app = _wsgi.OomlensApp(str(logdir))
    tracemalloc.start()
    try:
        status, headers, body = call(app, f"/data/plugin/oomlens/capture/{RUN}/big.xplane.pb")
        assert status == 200 and int(headers["Content-Length"]) == size
        assert not isinstance(body, (bytes, list))
        total = slices = largest = 0
        for block in body:
            total += len(block)
            slices += 1
            largest = max(largest, len(block))
        body.close()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert total == size and slices >= 96 and largest <= _wsgi.CHUNK
    assert peak < 8 << 20, f"serving 96 MiB held {peak} bytes at once"
    # With the server's wsgi.file_wrapper, the file object is handed over as it is.
    seen = {}

    def wrapper(f, block):
        seen["args"] = (f, block)
        return iter(lambda: f.read(block), b"")

    status, _, body = call(app, f"/data/plugin/oomlens/capture/{RUN}/host0.xplane.pb", environ={"wsgi.file_wrapper": wrapper})
    assert status == 200 and seen["args"][1] == _wsgi.CHUNK and b"".join(body) == CAPTURE.read_bytes()
    seen["args"][0].close()


def test_other_methods_and_routes(logdir):
    app = _wsgi.OomlensApp(str(logdir))
    status, headers, _ = call(app, f"/data/plugin/oomlens/capture/{RUN}/host0.xplane.pb", method="POST")
    assert status == 405 and headers["Allow"] == "GET, HEAD"
    status, _, body = call(app, "/data/plugin/oomlens/nothing")
    assert status == 404 and read(body) == b"oomlens: no such route 'nothing'\n"
    status, headers, body = call(app, "/data/plugin/oomlens/index.js")
    assert status == 200 and headers["Content-Type"].startswith("text/javascript")
    assert b"export async function render()" in read(body)


# ---------------------------------------------------------------- the page, in the wheel

PAGE_FILES = ["index.html", "app.js", "analyze.js", "worker.js", "oomlens.js", "oomlens_bg.wasm", "style.css"]


def test_the_wheel_ships_the_page():
    files = _wsgi.page_files()
    missing = [f for f in PAGE_FILES if f not in files]
    assert not missing, f"the installed oomlens ({_wsgi.STATIC}) lacks the page's {missing}: build dist/ before the wheel (scripts/python-test.sh)"


def test_page_routes_serve_the_page_with_its_policy(logdir):
    app = _wsgi.OomlensApp(str(logdir))
    status, headers, body = call(app, "/data/plugin/oomlens/page/index.html")
    html = read(body)
    assert status == 200 and headers["Content-Type"] == "text/html; charset=utf-8"
    meta = re.search(rb'http-equiv="Content-Security-Policy" content="([^"]*)"', html).group(1).decode()
    header = headers["Content-Security-Policy"]
    # The header is the page's own policy, framing limited to this origin.
    assert header == meta.replace("'wasm-unsafe-eval'", "'unsafe-eval'") + "; frame-ancestors 'self'"
    status, headers, body = call(app, "/data/plugin/oomlens/page/oomlens_bg.wasm")
    assert status == 200 and headers["Content-Type"] == "application/wasm"
    assert read(body) == (Path(_wsgi.STATIC) / "oomlens_bg.wasm").read_bytes()
    status, headers, body = call(app, "/data/plugin/oomlens/page/worker.js")
    assert status == 200 and "Content-Security-Policy" not in headers
    read(body)
    # Every file of the page, those in sub-folders (views/) too.
    for name in _wsgi.page_files():
        status, headers, body = call(app, f"/data/plugin/oomlens/page/{name}")
        assert status == 200 and read(body) == (Path(_wsgi.STATIC) / name).read_bytes(), name
    for bad in ("../_wsgi.py", "..%2f_wsgi.py", "nope.js", "../frontend.js", "views/../../_wsgi.py", "views/../index.html", "/etc/passwd"):
        status, _, body = call(app, f"/data/plugin/oomlens/page/{bad}")
        assert status == 404, bad
        assert read(body).startswith(b"oomlens: ")


# ---------------------------------------------------------------- inside TensorBoard

def test_tensorboard_finds_the_plugin_by_its_entry_point():
    need_tensorboard()
    from tensorboard import default

    from oomlens.tensorboard.plugin import OomlensLoader

    eps = importlib.metadata.entry_points()
    eps = eps.select(group="tensorboard_plugins") if hasattr(eps, "select") else eps.get("tensorboard_plugins", ())
    eps = [ep for ep in eps if ep.name == "oomlens"]
    assert [ep.value for ep in eps] == ["oomlens.tensorboard.plugin:OomlensLoader"]
    assert OomlensLoader in default.get_dynamic_plugins()


def start_tensorboard(logdir, *flags):
    """`tensorboard --logdir LOGDIR --port 0 FLAGS` from this venv: (process, port, log lines)."""
    need_tensorboard()
    exe = Path(sys.executable).with_name("tensorboard")
    assert exe.is_file(), f"no tensorboard command beside {sys.executable}"
    proc = subprocess.Popen(
        [str(exe), "--logdir", str(logdir), "--port", "0", "--host", "127.0.0.1", "--load_fast", "false", *flags],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    lines = []
    port = None
    deadline = time.time() + 120
    while time.time() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        lines.append(line)
        m = re.search(r"at http://[^:/]+:(\d+)/", line)
        if m:
            port = int(m.group(1))
            break
    if port is None:
        proc.kill()
        pytest.fail("tensorboard did not start:\n" + "".join(lines) + proc.stdout.read())
    # Keep reading its log (warnings of TensorBoard's response checker among them).
    threading.Thread(target=lambda: lines.extend(proc.stdout), daemon=True).start()
    return proc, port, lines


def stop(proc):
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()


@pytest.fixture()
def tensorboard_server(logdir):
    proc, port, lines = start_tensorboard(logdir)
    yield port, lines
    stop(proc)


def get(port, path, method="GET"):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    conn.request(method, path)  # the path as it is: no normalization
    r = conn.getresponse()
    body = r.read()
    conn.close()
    return r.status, {k.lower(): v for k, v in r.getheaders()}, body


def test_tensorboard_serves_the_tab_the_page_and_the_capture(tensorboard_server, logdir):
    port, log = tensorboard_server
    status, _, body = get(port, "/data/plugins_listing")
    assert status == 200
    tab = json.loads(body)["oomlens"]
    assert tab["enabled"] is True and tab["tab_name"] == "OOM"
    assert tab["loading_mechanism"] == {"type": "IFRAME", "module_path": "/data/plugin/oomlens/index.js"}
    status, headers, body = get(port, "/data/plugin_entry.html?name=oomlens")
    assert status == 200 and b'import("./index.js")' in body and b'<base href="plugin/oomlens/"' in body
    status, headers, body = get(port, "/data/plugin/oomlens/index.js")
    assert status == 200 and headers["content-type"].startswith("text/javascript") and b"render()" in body

    status, _, body = get(port, "/data/plugin/oomlens/runs")
    assert [r["run"] for r in json.loads(body)["runs"]] == [RUN, OLDER, f"train/{RUN}"]

    status, headers, body = get(port, f"/data/plugin/oomlens/capture/{RUN}/host0.xplane.pb")
    assert status == 200 and body == CAPTURE.read_bytes() and int(headers["content-length"]) == len(body)
    status, _, body = get(port, f"/data/plugin/oomlens/capture/train/{RUN}/worker-0.xplane.pb")
    assert status == 200 and body == CAPTURE.read_bytes()

    status, headers, body = get(port, "/data/plugin/oomlens/page/index.html")
    assert status == 200 and "frame-ancestors 'self'" in headers["content-security-policy"]
    status, headers, body = get(port, "/data/plugin/oomlens/page/oomlens_bg.wasm")
    assert status == 200 and headers["content-type"] == "application/wasm" and body[:4] == b"\0asm"

    # Through the real server too, nothing outside plugins/profile, one clear line.
    for route in (
        f"/data/plugin/oomlens/capture/{RUN}/../../../../secret.xplane.pb",
        "/data/plugin/oomlens/capture/%2e%2e/%2e%2e/%2e%2e/secret.xplane.pb",
        f"/data/plugin/oomlens/capture/{RUN}/..%2f..%2f..%2f..%2fsecret.xplane.pb",
        "/data/plugin/oomlens/capture/..%5c..%5c..%5csecret.xplane.pb",
        "/data/plugin/oomlens/capture/nope/host0.xplane.pb",
        f"/data/plugin/oomlens/capture/{RUN}/notes.txt",
    ):
        status, headers, body = get(port, route)
        assert status in (400, 403, 404), (route, status, body)
        assert b"SECRET" not in body and b"NOTES-CONTENT" not in body
    status, _, body = get(port, f"/data/plugin/oomlens/capture/{RUN}/host9.xplane.pb")
    assert status == 404 and body == f"oomlens: run '{RUN}' has no host file 'host9.xplane.pb' (hosts: host0, host1)\n".encode()

    time.sleep(0.5)
    text = "".join(log)
    assert "Illegal Content-Security-Policy" not in text and "X-Content-Type-Options is required" not in text, text
    assert "Traceback" not in text, text


def test_tensorboard_under_a_path_prefix(logdir):
    proc, port, lines = start_tensorboard(logdir, "--path_prefix", "/tb")
    try:
        status, _, body = get(port, "/tb/data/plugin/oomlens/runs")
        assert status == 200 and [r["run"] for r in json.loads(body)["runs"]] == [RUN, OLDER, f"train/{RUN}"]
        status, _, body = get(port, f"/tb/data/plugin/oomlens/capture/train/{RUN}/worker-0.xplane.pb")
        assert status == 200 and body == CAPTURE.read_bytes()
        status, _, body = get(port, "/tb/data/plugin/oomlens/page/index.html")
        assert status == 200 and b'src="app.js"' in body
    finally:
        stop(proc)
