"""oomlens.fleet on Dask: a LocalCluster of 2 worker processes over 200+ host files made
from the real captures (tests/fixtures/** and ../shared/captures/**, linked into runs of
a tmp dir), with out-of-memory runs, an error log in a log dir, corrupt, empty and cut
files and a hostile name; each row checked against what oomlens.analyze says for its
file, each run against `oomlens LOGDIR --format json`'s cross-host summary; the same
through the command line on a scheduler address, through fsspec (`memory://`) with the
engine reading a file object block by block, and the views escaped.

Needs the `fleet` extra (dask, distributed, pyarrow, fsspec): skipped without it, except
under CI=true, where its absence fails the run (scripts/python-test.sh installs it)."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import oomlens
from oomlens import OomlensError, _native

from conftest import FIXTURES, ROOT

try:
    import dask  # noqa: F401
    import fsspec
    import pyarrow.parquet as pq
    from dask.distributed import Client, LocalCluster
except ImportError as missing:
    if os.environ.get("CI") == "true":
        raise ImportError(
            f"CI=true but the fleet extra is not installed ({missing}): "
            "scripts/python-test.sh installs dask, distributed, pyarrow and fsspec"
        ) from missing
    pytest.skip(f"the fleet extra is not installed ({missing}): oomlens.fleet is not tested",
                allow_module_level=True)

from oomlens import fleet  # noqa: E402

SHARED = ROOT.parent / "shared" / "captures"
RUNS = 30
HOSTS_PER_RUN = 7
HOSTILE = "job_<img src=x onerror=alert(1)>"


def real_captures():
    found = sorted(FIXTURES.rglob("*.xplane.pb"))
    if SHARED.is_dir():
        found += sorted(SHARED.glob("*.xplane.pb"))
    return found


def _run_dir(root: Path, job: str, stamp: str) -> Path:
    d = root / job / "plugins" / "profile" / stamp
    d.mkdir(parents=True)
    return d


@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    """runs/<job>/plugins/profile/<stamp>/<host>.xplane.pb, links to the real captures."""
    root = tmp_path_factory.mktemp("fleet") / "runs"
    caps = real_captures()
    assert len(caps) >= 20
    n = 0
    for i in range(RUNS):
        d = _run_dir(root, f"job{i:03}", f"2025_01_01_00_{i:02}_00")
        for k in range(HOSTS_PER_RUN):
            (d / f"host{k}.xplane.pb").symlink_to(caps[(i * HOSTS_PER_RUN + k) % len(caps)])
            n += 1
    # Out of memory: the error log beside the host files …
    d = _run_dir(root, "job_oom", "2025_02_01_00_00_00")
    for k in range(4):
        (d / f"host{k}.xplane.pb").symlink_to(FIXTURES / "oom_first_call" / "oom_first_call.xplane.pb")
        n += 1
    (d / "error.txt").symlink_to(FIXTURES / "oom_first_call" / "error.txt")
    (d / "notes.md").write_text("RESOURCE_EXHAUSTED: quoted in notes, not a log\n")
    # … and in the log dir above plugins/profile.
    d = _run_dir(root, "job_leak", "2025_02_02_00_00_00")
    for k in range(3):
        (d / f"host{k}.xplane.pb").symlink_to(FIXTURES / "oom_leak" / "oom_leak.xplane.pb")
        n += 1
    (root / "job_leak" / "train.log").symlink_to(FIXTURES / "oom_leak" / "error.txt")
    # Files that cannot be read, beside readable ones, and a hostile name.
    d = root / "job003" / "plugins" / "profile" / "2025_01_01_00_03_00"
    (d / "host_corrupt.xplane.pb").write_bytes(os.urandom(4096))
    (d / "host_empty.xplane.pb").write_bytes(b"")
    whole = (FIXTURES / "attention_train" / "attention_train.xplane.pb").read_bytes()
    (d / "host_cut.xplane.pb").write_bytes(whole[: len(whole) // 2])
    (d / "host_dangling.xplane.pb").symlink_to(d / "no-such-file")
    n += 4
    d = _run_dir(root, HOSTILE, "2025_03_01_00_00_00")
    (d / "<svg onload=alert(1)>.xplane.pb").write_bytes(b"\x00not a capture")
    (d / "host0.xplane.pb").symlink_to(FIXTURES / "oom_top_scores" / "oom_top_scores.xplane.pb")
    (d / "oom.log").symlink_to(FIXTURES / "oom_top_scores" / "error.txt")
    n += 2
    assert n >= 200
    return root, n


def expected(path: str, error_log):
    """What oomlens.analyze says of one file: its report, or its error."""
    try:
        return oomlens.analyze(path, error_text=Path(error_log) if error_log else None), None
    except OomlensError as e:
        return None, e


def check_row(row):
    report, error = expected(row["path"], row["error_log"])
    if error is not None:
        assert row["status"] == "failed", row
        assert (row["error"], row["error_kind"]) == (error.message, error.kind)
        assert row["verdict"] is None and row["diagnosis"] == [] and not row["ran_out"]
        return
    assert row["file"] == report["file"] and row["host"] == report["host"]
    assert row["file_bytes"] == report["file_bytes"]
    notes = [n["id"] for n in report["notes"]]
    assert row["notes"] == notes
    partial = "capture_truncated" in notes or "plane_damaged" in notes
    assert row["status"] == ("partial" if partial else "analyzed")
    assert row["error"] is None and row["error_kind"] is None
    assert row["verdict"] == report["headline"]["verdict"]
    assert row["headline"] == report["headline"]["text"]
    assert row["module"] == report.get("selected_module")
    plan = [m["plan"]["peak_bytes"] for m in report["modules"]
            if m["label"] == report.get("selected_module")]
    assert row["plan_peak_bytes_read"] == (plan[0] if plan else None)
    runtime = report.get("runtime") or {}
    pools = [a for a in runtime.get("allocators", []) if a["kind"] == "device"]
    assert row["runtime_peak_bytes_measured"] == (
        max(a["peak_in_use_bytes"] for a in pools) if pools else None)
    assert row["capacity_bytes_measured"] == report.get("capacity_bytes")
    assert row["growth_per_execution_bytes_measured"] == runtime.get("growth_per_execution_bytes")
    diagnosis = report["diagnosis"]
    assert row["diagnosis"] == [
        {"id": d["id"], "label": d["label"], "saving_bytes_estimated": d.get("saving_bytes"),
         "fits_after": d.get("fits_after")} for d in diagnosis]
    top = diagnosis[0] if diagnosis else {}
    assert row["top_diagnosis"] == top.get("id")
    assert row["top_title"] == top.get("title")
    assert row["top_label"] == top.get("label")
    assert row["top_saving_bytes_estimated"] == top.get("saving_bytes")
    assert row["top_fits_after"] == top.get("fits_after")
    savings = [d["saving_bytes"] for d in diagnosis if d.get("saving_bytes") is not None]
    assert row["best_saving_bytes_estimated"] == (max(savings) if savings else None)
    assert row["ran_out"] == bool(row["oom_evidence"])
    if report.get("error"):
        assert "pasted_error" in row["oom_evidence"]
    assert row["tool"] == report["tool"]


ENGINE_FIELDS = {
    # fleet column: hosts_summary[] field
    "status": "status", "error_kind": "error_kind", "verdict": "verdict",
    "module": "selected_module", "plan_peak_bytes_read": "plan_peak_bytes",
    "runtime_peak_bytes_measured": "runtime_peak_bytes",
    "capacity_bytes_measured": "capacity_bytes",
    "growth_per_execution_bytes_measured": "growth_per_execution_bytes",
    "oom_evidence": "oom_evidence", "ran_out_at_ns_measured": "ran_out_at_ns",
    "ran_out_first": "ran_out_first", "notes": "notes", "file_bytes": "file_bytes",
}


def check_against_cli_folders(rows, cli):
    """Each run of several hosts: the rows are `oomlens RUN [--error-text LOG] --format
    json`'s hosts_summary[] (the engine's own rows, compared across the run)."""
    by_run = {}
    for r in rows:
        by_run.setdefault(r["run"], []).append(r)
    checked = 0
    for run, group in by_run.items():
        if len(group) < 2 or not Path(run).is_dir():
            continue
        # The run's error log given as the error text, which applies to every host.
        # (With --error-text the CLI stops at a host file it cannot read, so such a run
        # is checked against oomlens.analyze alone.)
        log = group[0]["error_log"]
        if log and any(r["status"] == "failed" for r in group):
            continue
        status, out, err = cli(run, "--format", "json", *(["--error-text", log] if log else []))
        assert status == 0, err
        summary = json.loads(out)["hosts_summary"]
        # A dangling link is no host file to the CLI; to the fleet, a failed row.
        group = [r for r in group if r["host"] != "host_dangling"]
        assert [s["host"] for s in summary] == [r["host"] for r in group]
        for s, r in zip(summary, group):
            for ours, theirs in ENGINE_FIELDS.items():
                assert r[ours] == s[theirs], (run, r["host"], ours)
        checked += 1
    assert checked >= RUNS


def check_runs(result, n):
    assert len(result.hosts) == n
    runs = {r["run"].replace("\\", "/").split("/runs/")[1].split("/")[0]: r for r in result.runs}
    assert len(runs) == RUNS + 3
    oom = runs["job_oom"]
    assert oom["ran_out"] and oom["hosts_ran_out"] == 4 and oom["verdict"] == "ran_out"
    assert oom["first_host"] == "host0" and oom["module"] == "jit_rank_eval(10)"
    assert oom["top_cause"] == "dominant_buffer" and oom["largest_saving_fix"] == "dominant_buffer"
    assert oom["evidence"] == ["pasted_error"] and oom["error_log"].endswith("error.txt")
    leak = runs["job_leak"]
    assert leak["ran_out"] and leak["error_log"].endswith(os.path.join("job_leak", "train.log"))
    bad = runs["job003"]
    assert bad["hosts"] == HOSTS_PER_RUN + 4
    assert bad["hosts_failed"] + bad["hosts_partial"] >= 3
    kinds = {h["host"]: h["error_kind"] for h in result.hosts if "job003" in h["run"]}
    assert kinds["host_corrupt"] and kinds["host_empty"] == "empty"
    assert kinds["host_dangling"] == "open"
    assert not runs["job000"]["ran_out"] and runs["job000"]["first_host"] is None
    hostile = runs[HOSTILE]
    assert hostile["ran_out"] and hostile["hosts_failed"] == 1
    for run in result.runs:
        s = [h for h in result.hosts if h["run"] == run["run"]]
        assert run["hosts"] == len(s)
        assert sum(h["ran_out_first"] for h in s) <= 1
        savings = [d["saving_bytes_estimated"] for h in s for d in h["diagnosis"]
                   if d["saving_bytes_estimated"] is not None]
        assert run["largest_saving_bytes_estimated"] == (max(savings) if savings else None)


def check_views(result):
    md, page = result.markdown(), result.html()
    for text in (md, page):
        assert "<img" not in text and "<svg" not in text
        assert "&lt;img src=x onerror=alert(1)&gt;" in text
        assert "&lt;svg onload=alert(1)&gt;" in text
    assert page.startswith("<!DOCTYPE html>") and "<script" not in page.lower()
    # Runs that ran out lead the table.
    table = [line for line in md.splitlines() if line.startswith("| ")][1:]
    assert table[0].split(" | ")[2].startswith("yes")


@pytest.fixture(scope="module")
def cluster():
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=":0") as c:
        yield c


def test_two_workers_over_200_host_files_row_equals_analyze(tree, cluster, cli):
    root, n = tree
    with Client(cluster) as client:
        result = fleet.run([root], client=client)
    assert result.workers == 2
    for row in result.hosts:
        check_row(row)
    check_runs(result, n)
    check_against_cli_folders(result.hosts, cli)
    check_views(result)


def test_command_line_on_a_scheduler_address_writes_parquet_and_views(tree, cluster, tmp_path):
    root, n = tree
    out = tmp_path / "fleet.parquet"
    done = subprocess.run(
        [sys.executable, "-m", "oomlens.fleet", str(root), "--out", str(out),
         "--scheduler", cluster.scheduler_address, "--quiet"],
        capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert f"{n} host files" in done.stderr and "runs ran out" in done.stderr
    hosts = pq.read_table(out)
    runs = pq.read_table(tmp_path / "fleet.runs.parquet")
    assert hosts.schema.metadata[b"oomlens.schema"] == b"oomlens-fleet/1"
    assert hosts.column_names == [c for c, _ in fleet.HOST_COLUMNS]
    assert runs.column_names == [c for c, _ in fleet.RUN_COLUMNS]
    rows = hosts.to_pylist()
    assert len(rows) == n and runs.num_rows == RUNS + 3
    for row in rows:
        check_row(row)
    # The same rows as the API gives (but for the times).
    again = fleet.Fleet(rows, [root])
    assert again.runs == runs.to_pylist()
    md = (tmp_path / "fleet.md").read_text()
    page = (tmp_path / "fleet.html").read_text()
    assert md == again.markdown() and page == again.html()
    assert "<img" not in page


def test_local_cluster_of_its_own_and_no_host_file(tmp_path):
    d = _run_dir(tmp_path / "one", "job", "r")
    (d / "h.xplane.pb").symlink_to(FIXTURES / "oom_top_scores" / "oom_top_scores.xplane.pb")
    result = fleet.run([tmp_path / "one"], workers=1)
    assert [h["status"] for h in result.hosts] == ["analyzed"]
    empty = tmp_path / "none"
    empty.mkdir()
    done = subprocess.run([sys.executable, "-m", "oomlens.fleet", str(empty), "--out",
                           str(tmp_path / "x.parquet"), "--workers", "1"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 2 and "no host file" in done.stderr


def test_fsspec_urls_are_read_by_the_engine_block_by_block(tmp_path):
    """memory:// (in-process workers: the memory store is the process's): every row,
    streamed or spooled, equals the same file's row read from disk; the run's error log
    is joined."""
    fs = fsspec.filesystem("memory")
    base = "/fleet-test"
    files = {
        "jobA/plugins/profile/r1/host0.xplane.pb": FIXTURES / "oom_first_call" / "oom_first_call.xplane.pb",
        "jobA/plugins/profile/r1/host1.xplane.pb": FIXTURES / "oom_first_call" / "oom_first_call.xplane.pb",
        "jobA/plugins/profile/r1/error.txt": FIXTURES / "oom_first_call" / "error.txt",
        "jobB/plugins/profile/r1/host0.xplane.pb": FIXTURES / "attention_train" / "attention_train.xplane.pb",
        "jobB/plugins/profile/r1/bad.xplane.pb": None,
    }
    local = tmp_path / "same"
    for rel, src in files.items():
        data = src.read_bytes() if src else b"garbage, not a capture"
        fs.pipe(f"{base}/{rel}", data)
        (local / rel).parent.mkdir(parents=True, exist_ok=True)
        (local / rel).write_bytes(data)
    if SHARED.is_dir():
        big = (SHARED / "xprof_tf_gpu_multi_worker_2020.xplane.pb").read_bytes()
        fs.pipe(f"{base}/jobC/plugins/profile/r1/gpu.xplane.pb", big)
        (local / "jobC/plugins/profile/r1").mkdir(parents=True)
        (local / "jobC/plugins/profile/r1/gpu.xplane.pb").write_bytes(big)
    try:
        # One worker thread: fsspec's memory store hands every reader of a path the
        # same BytesIO ("each path should only be active once at any moment"), so two
        # hosts of one run reading its error log at once would share one position (a
        # race of the test's store, not of real ones, which open independent handles).
        with LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                          dashboard_address=":0") as c, Client(c) as client:
            remote = fleet.run([f"memory://{base}"], client=client)
            spooled = fleet.run([f"memory://{base}"], client=client, spool=True)
            on_disk = fleet.run([local], client=client)
    finally:
        fs.rm(base, recursive=True)
    assert len(remote.hosts) == len(on_disk.hosts) == len(files) - 1 + SHARED.is_dir()
    skip = {"run", "path", "error_log", "seconds", "error"}
    for r, s, d in zip(remote.hosts, spooled.hosts, on_disk.hosts):
        assert r["path"].startswith("memory://")
        assert {k: v for k, v in r.items() if k not in skip} == \
               {k: v for k, v in d.items() if k not in skip}
        assert {k: v for k, v in s.items() if k not in skip | {"error"}} == \
               {k: v for k, v in d.items() if k not in skip | {"error"}}
    a = [r for r in remote.runs if r["run"].endswith("jobA/plugins/profile/r1")][0]
    assert a["ran_out"] and a["evidence"] == ["pasted_error"] and a["first_host"] == "host0"
    assert a["error_log"].startswith("memory://")
    bad = [h for h in remote.hosts if h["host"] == "bad"][0]
    assert bad["status"] == "failed" and bad["error_kind"]


class Reads(io.BytesIO):
    """A file object that records the reads asked of it."""

    def __init__(self, data):
        super().__init__(data)
        self.reads = []

    def read(self, n=-1):
        self.reads.append(n)
        return super().read(n)


def test_reader_binding_equals_bytes_and_holds_a_few_blocks():
    cap = FIXTURES / "oom_first_call" / "oom_first_call.xplane.pb"
    data = cap.read_bytes()
    if SHARED.is_dir():
        # Three captures end to end are one XSpace (protobuf messages concatenate):
        # 9 MB, more than two blocks.
        data = (SHARED / "xprof_tf_gpu_multi_worker_2020.xplane.pb").read_bytes() * 3
    reader = Reads(data)
    analysis = _native.analyze_reader(reader, len(data), "h.xplane.pb")
    assert analysis.json() == oomlens.analyze(data, name="h.xplane.pb").json_text
    assert reader.reads and max(reader.reads) <= 4 << 20
    # With an error log given beside it: as the same bytes analyzed with the log.
    log = (FIXTURES / "oom_first_call" / "error.txt").read_bytes()
    data = cap.read_bytes()
    joined = _native.analyze_reader(Reads(data), len(data), "oom_first_call.xplane.pb",
                                    None, [("error.txt", log)])
    same = _native.analyze(data, None, None, "oom_first_call.xplane.pb")
    assert json.loads(joined.json())["headline"]["verdict"] == "ran_out"
    assert json.loads(same.json())["headline"]["verdict"] == "plan_only"
    disk = oomlens.analyze(cap, error_text=FIXTURES / "oom_first_call" / "error.txt")
    assert json.loads(joined.json()) == dict(disk)

    class Broken(io.BytesIO):
        def read(self, n=-1):
            raise OSError("connection reset")

    with pytest.raises(OomlensError) as e:
        _native.analyze_reader(Broken(data), len(data), "h.xplane.pb")
    assert e.value.kind == "read" and "connection reset" in str(e.value)


def test_error_logs_are_named_like_logs():
    from oomlens.fleet._rows import best_log, log_rank

    assert best_log(["notes.md", "train.log", "error.txt", "h.xplane.pb"]) == "error.txt"
    assert best_log(["stderr", "config.json"]) == "stderr"
    assert log_rank("oracle.json") is None and log_rank("layout.bin") is None
    assert log_rank("readme.txt") is None
