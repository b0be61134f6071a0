"""oomlens.analyze on the committed captures: the same report as the Rust CLI, byte
for byte, and the figures XLA's memory_analysis() gave when they were recorded."""

from __future__ import annotations

import json
import pickle
import sys
import threading
from pathlib import Path
from concurrent.futures import ThreadPoolExecutor

import pytest

import oomlens

from conftest import FIXTURES, captures

OOM_FIRST_CALL = FIXTURES / "oom_first_call"


@pytest.mark.parametrize("path", captures(), ids=lambda p: str(p.relative_to(FIXTURES)))
def test_json_equals_the_cli_byte_for_byte(path, cli):
    status, out, err = cli(path, "--format", "json")
    assert status == 0, err
    report = oomlens.analyze(path)
    assert report.json_text == out
    assert oomlens.analyze_json(path) == out
    assert report == json.loads(out)
    assert report["schema"] == oomlens.SCHEMA == "oomlens/1"


@pytest.mark.parametrize(
    "args",
    [
        ("oom_first_call",),
        ("oom_first_call", "--error-text", "oom_first_call/error.txt"),
        ("attention_train", "--module", "jit_train_step"),
        ("debug_print_8dev",),
    ],
    ids=lambda a: " ".join(a),
)
def test_folders_options_and_renderings_equal_the_cli(args, cli):
    path = FIXTURES / args[0]
    options = dict(zip(args[1::2], args[2::2]))
    error_text = None
    if "--error-text" in options:
        options["--error-text"] = str(FIXTURES / options["--error-text"])
        # As a path: the report names the file, as the CLI's does.
        error_text = Path(options["--error-text"])
    flags = [x for kv in options.items() for x in kv]
    report = oomlens.analyze(path, module=options.get("--module"), error_text=error_text)
    for fmt, rendered in [
        ("json", report.json_text),
        ("text", report.text()),
        ("markdown", report.markdown()),
        ("html", report.html()),
    ]:
        status, out, err = cli(path, "--format", fmt, *flags)
        assert status == 0, err
        assert rendered == out, fmt
    status, out, _ = cli(path, "--top", "3", *flags)
    assert report.text(top=3) == out
    assert str(report) == report.text()


def test_the_failed_request_is_the_temporary_block_memory_analysis_reported():
    oracle = json.loads((OOM_FIRST_CALL / "oracle.json").read_text())
    failing = next(m for m in oracle["modules"] if m["name"] == "jit_rank_eval")
    text = (OOM_FIRST_CALL / "error.txt").read_text()
    report = oomlens.analyze(OOM_FIRST_CALL, error_text=text)
    assert report["headline"]["verdict"] == "ran_out"
    assert report["selected_module"] == f"jit_rank_eval({failing['program_id']})"
    assert report["error"]["requested_bytes"] == failing["temp_size_in_bytes"] == 281475043819520
    module = next(m for m in report["modules"] if m["label"] == report["selected_module"])
    assert module["plan"]["temp_bytes"] == failing["temp_size_in_bytes"]
    assert module["plan"]["argument_bytes"] == failing["argument_size_in_bytes"]
    assert "256.0 TiB temporary block of jit_rank_eval" in report["headline"]["text"]


def test_bytes_are_analyzed_as_the_file_is():
    path = OOM_FIRST_CALL / "oom_first_call.xplane.pb"
    data = path.read_bytes()
    from_file = oomlens.analyze(path)
    assert oomlens.analyze(data, name=path.name).json_text == from_file.json_text
    assert oomlens.analyze(bytearray(data), name=path.name) == from_file
    assert oomlens.analyze(memoryview(data), name=path.name) == from_file
    unnamed = oomlens.analyze(data)
    assert unnamed["file"] == "capture.xplane.pb" and unnamed["host"] == "capture"
    assert unnamed["headline"] == from_file["headline"]


def test_errors_are_one_exception_with_the_engine_kind_and_the_cli_message(cli, tmp_path):
    missing = tmp_path / "nowhere.xplane.pb"
    garbage = tmp_path / "garbage.xplane.pb"
    garbage.write_bytes(b"\xff\xfe not a capture")
    empty = tmp_path / "empty"
    empty.mkdir()
    cases = [
        (missing, {}, "open"),
        (garbage, {}, "not_a_capture"),
        (empty, {}, "nothing_in_dir"),
        (OOM_FIRST_CALL, {"module": "no_such_module"}, "unknown_module"),
    ]
    for path, kwargs, kind in cases:
        with pytest.raises(oomlens.OomlensError) as raised:
            oomlens.analyze(path, **kwargs)
        e = raised.value
        assert e.kind == kind
        flags = ["--module", kwargs["module"]] if kwargs else []
        status, out, err = cli(path, *flags)
        assert status == 2 and out == ""
        assert err == f"oomlens: {e}\n"  # the same one line
        assert "\n" not in str(e)
        again = pickle.loads(pickle.dumps(e))
        assert (type(again), again.kind, str(again)) == (oomlens.OomlensError, kind, str(e))
    with pytest.raises(oomlens.OomlensError) as raised:
        oomlens.analyze(b"")
    assert raised.value.kind == "empty"
    with pytest.raises(TypeError):
        oomlens.analyze(42)


def test_a_report_pickles_as_its_json():
    report = oomlens.analyze(OOM_FIRST_CALL)
    again = pickle.loads(pickle.dumps(report))
    assert type(again) is dict and again == report


def test_threads_analyze_in_parallel_and_agree():
    paths = captures()
    expected = [oomlens.analyze_json(p) for p in paths]
    with ThreadPoolExecutor(4) as pool:
        assert list(pool.map(oomlens.analyze_json, paths)) == expected


def test_the_analysis_releases_the_gil():
    # While the engine works, another Python thread keeps running: with the GIL held it
    # could not take a single step until the call returned.
    path = FIXTURES / "attention_train"
    ticks = 0
    stop = threading.Event()
    started = threading.Event()

    def count():
        nonlocal ticks
        started.set()
        while not stop.is_set():
            ticks += 1

    previous = sys.getswitchinterval()
    sys.setswitchinterval(0.25)  # longer than the calls: held, the GIL would not pass
    try:
        t = threading.Thread(target=count)
        t.start()
        started.wait()
        before = ticks
        for _ in range(3):
            oomlens.analyze_json(path)
        during = ticks - before
    finally:
        stop.set()
        t.join()
        sys.setswitchinterval(previous)
    assert during > 1000, f"the counting thread ran {during} steps during the analysis"
