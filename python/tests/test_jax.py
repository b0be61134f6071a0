"""oomlens.jax on the CPU backend, with real failures: a jitted step whose temporary
block (4 TiB) exceeds the machine's memory raises RESOURCE_EXHAUSTED there.

These tests need jax; without it they are reported as skipped, with the reason."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

jax = pytest.importorskip("jax", reason="jax is not installed: oomlens.jax is not tested")
jnp = pytest.importorskip("jax.numpy")

import oomlens  # noqa: E402
import oomlens.jax as ojax  # noqa: E402

REQUESTED = 1 << 42  # f32[16384, 67108864]: 4 TiB


@jax.jit
def step(x):
    # Broadcast then sort: the 4 TiB temporary cannot be fused away.
    y = jnp.broadcast_to(x[:, None], (x.shape[0], 1 << 26)) * 2.0
    return jnp.sort(y, axis=1).sum()


@jax.jit
def small(x):
    return (x * 2.0).sum()


def batch():
    return jnp.ones((1 << 14,), jnp.float32)


def _error_class():
    return getattr(jax.errors, "JaxRuntimeError", RuntimeError)


def _check_evidence(cm, error, cli, with_capture=True):
    folder = cm.folder
    names = sorted(p.name for p in folder.iterdir())
    assert "error.txt" in names
    assert "RESOURCE_EXHAUSTED" in (folder / "error.txt").read_text()
    assert "memory.prof" in names and (folder / "memory.prof").stat().st_size > 0
    if not with_capture:
        assert cm.report is None and not any(n.endswith(".xplane.pb") for n in names)
        assert "no profiler capture" in cm.explanation
        return
    assert "report.html" in names and any(n.endswith(".xplane.pb") for n in names)
    report = cm.report
    assert report["headline"]["verdict"] == "ran_out"
    assert report["error"]["requested_bytes"] == REQUESTED
    assert report["selected_module"].startswith("jit_step(")
    module = next(m for m in report["modules"] if m["label"] == report["selected_module"])
    assert module["plan"]["temp_bytes"] == REQUESTED  # the plan XLA compiled
    # The explanation is under the traceback: a note (3.11+) with the verdict line.
    verdict = "verdict: " + report["headline"]["text"]
    assert verdict in cm.explanation
    if sys.version_info >= (3, 11):
        assert any(verdict in n for n in error.__notes__)
    # The folder is what the CLI reads: the same report, byte for byte.
    status, out, err = cli(folder, "--format", "json", "--error-text", folder / "error.txt")
    assert status == 0, err
    assert out == report.json_text
    assert (folder / "report.html").read_text() == report.html()


def test_a_block_that_runs_out_explains_itself(tmp_path, cli):
    folder = tmp_path / "evidence"
    with pytest.raises(_error_class()) as raised:
        with ojax.explain_oom(folder, trace=True) as cm:
            float(step(batch()))
    assert ojax.is_oom(raised.value)
    assert cm.folder == folder
    _check_evidence(cm, raised.value, cli)


def test_the_decorator_uses_the_trace_already_running(tmp_path, cli):
    explained = ojax.explain_oom(tmp_path / "evidence")(step)
    logdir = tmp_path / "trace"
    with pytest.raises(_error_class()) as raised:
        with jax.profiler.trace(str(logdir)):  # yours: stopped so its capture is written
            explained(batch())
    captures = list(logdir.rglob("*.xplane.pb"))
    assert captures, "the running trace was written"
    copied = list((tmp_path / "evidence").glob("*.xplane.pb"))
    assert [c.name for c in copied] == [captures[0].name]
    # The decorator made a fresh context for the call; its report is on the note.
    assert any("verdict: Ran out of memory" in n for n in getattr(raised.value, "__notes__", [""]))
    report = oomlens.analyze(tmp_path / "evidence", error_text=(tmp_path / "evidence/error.txt").read_text())
    assert report["error"]["requested_bytes"] == REQUESTED


def test_without_a_capture_the_error_and_memory_profile_are_kept(tmp_path, cli):
    with pytest.raises(_error_class()) as raised:
        with ojax.explain_oom(tmp_path / "evidence") as cm:
            float(step(batch()))
    _check_evidence(cm, raised.value, cli, with_capture=False)


def test_success_and_other_errors_pass_through(tmp_path):
    with ojax.explain_oom(tmp_path / "ok", trace=True) as cm:
        assert float(small(batch())) == 2.0 * (1 << 14)
    assert cm.folder is None and not (tmp_path / "ok").exists()
    with pytest.raises(ValueError) as raised:
        with ojax.explain_oom(tmp_path / "other"):
            raise ValueError("not memory")
    assert not getattr(raised.value, "__notes__", None)
    assert not (tmp_path / "other").exists()


def test_enable_dumps_before_jax_starts(tmp_path):
    # A fresh process: XLA reads XLA_FLAGS once, when the backend starts.
    dumps = tmp_path / "dumps"
    code = textwrap.dedent(
        f"""
        import json, os, oomlens.jax
        flags = oomlens.jax.enable_dumps({str(dumps)!r})
        import jax, jax.numpy as jnp
        print(json.dumps([flags, float(jax.jit(lambda x: (x * 3).sum())(jnp.ones(8)))]))
        """
    )
    env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    flags, value = json.loads(done.stdout.splitlines()[-1])
    assert value == 24.0
    assert flags.split() == [f"--xla_dump_to={dumps}", "--xla_dump_hlo_as_proto"]
    written = [p.name for p in dumps.iterdir()]
    # The compiled plan, in the proto form oomlens reads (docs/xla-dumps.md).
    assert any(
        "jit__lambda" in n and n.endswith("cpu_after_optimizations.hlo.pb") for n in written
    ), written


def test_enable_dumps_warns_once_jax_has_started(tmp_path, monkeypatch):
    monkeypatch.setenv("XLA_FLAGS", "--xla_cpu_enable_fast_math=false --xla_dump_to=/old")
    float(small(batch()))
    with pytest.warns(RuntimeWarning, match="new process"):
        flags = ojax.enable_dumps(tmp_path / "d", as_text=True)
    assert flags.split() == ["--xla_cpu_enable_fast_math=false", f"--xla_dump_to={tmp_path / 'd'}"]
